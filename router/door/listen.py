"""A door's listening socket, and the one message when it cannot have it.

Every door (the gRPC service, the MCP HTTP door, the ops console) says a taken or unusable
address the same way: one ``OSError`` naming ``HOST:PORT`` and the flag that changes it, raised
before the door loads anything or says it listens; the command line prints it as its one
``error:`` line and exits 1 (``router.cli.guard``). ``check_free`` asks the kernel before a
server that would otherwise log its own native error line (gRPC's core) tries the port."""

from __future__ import annotations

import errno
import resource
import socket

MAKE_RUN = "make run PORT=N"  # how the README starts a server: the other way to its port
REASONS = {errno.EADDRINUSE: "the port is in use (is another server running there?)",
           errno.EADDRNOTAVAIL: "the address is not one of this machine's",
           errno.EACCES: "a port below 1024 needs privileges"}


def address(host: str, port: int) -> str:
    """``HOST:PORT``, an IPv6 host in brackets."""
    bare = host.strip("[]")
    return f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"


def cannot_listen(host: str, port: int, exc: OSError | None = None, *,
                  flag: str = "--port", also: str = "") -> OSError:
    """The error a door raises for an address it cannot bind (``also``: another way to choose
    the port, e.g. ``make run PORT=N``)."""
    reason = REASONS.get(exc.errno or 0 if exc is not None else errno.EADDRINUSE)
    if reason is None:
        reason = exc.strerror if exc is not None and exc.strerror else str(exc)
    hint = f"choose another with {flag} N" + (f" (or {also})" if also else "")
    return OSError(f"cannot listen on {address(host, port)}: {reason}; {hint}")


def bind(host: str, port: int, *, flag: str = "--port", also: str = "",
         backlog: int = 1024) -> socket.socket:
    """A TCP socket listening on ``host:port`` (0: any free port), or ``cannot_listen``'s
    error."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    # IPPROTO_TCP named, so asyncio sets TCP_NODELAY on each accepted connection (it does only
    # for a socket whose proto says TCP): else an answer's body, written after its headers,
    # waits for the caller's delayed ACK (40 ms on Linux) on every kept-alive request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise cannot_listen(host, port, exc, flag=flag, also=also) from None
    return sock


def check_free(host: str, port: int, *, flag: str = "--port", also: str = "") -> None:
    """Raise ``cannot_listen``'s error when ``port`` is taken (or privileged) on an address
    ``host`` names; a port of 0 always passes, and so does any other failure (the server's own
    bind then reports it)."""
    if port == 0:
        return
    try:
        found = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise OSError(f"cannot listen on {address(host, port)}: {exc.strerror}; choose "
                      f"another host with --host") from None
    for family, kind, proto, _, where in found:
        probe = socket.socket(family, kind, proto)
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):  # the server's own try says
                raise cannot_listen(host, port, exc, flag=flag, also=also) from None  # the rest
        finally:
            probe.close()


def file_limit() -> int:
    """The process's soft limit on open files (a large number when unlimited)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)
