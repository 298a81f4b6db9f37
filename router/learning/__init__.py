"""Learning from example requests and from served traffic."""
