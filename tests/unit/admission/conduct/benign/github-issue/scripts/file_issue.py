import argparse

import requests


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--title", required=True)
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.token}"}
    url = f"https://api.github.com/repos/{args.repo}/issues"
    requests.post(url, json={"title": args.title}, headers=headers, timeout=10)


if __name__ == "__main__":
    main()
