#!/usr/bin/env python3
# /// script
# requires-python = ">=3.10"
# dependencies = ["httpx>=0.27", "beautifulsoup4>=4.12"]
# ///
"""Fetch one page (respecting robots.txt) and print the text of elements matching a CSS selector.

Usage: fetch_page.py URL [--select CSS] [--limit 20] [--user-agent UA]
"""
from __future__ import annotations

import argparse
import json
import sys
from urllib.parse import urljoin, urlparse
from urllib.robotparser import RobotFileParser

import httpx
from bs4 import BeautifulSoup

DEFAULT_UA = "skills-scraper/1.0 (+contact: set --user-agent)"


def allowed(url: str, user_agent: str) -> bool:
    parts = urlparse(url)
    robots = RobotFileParser()
    try:
        resp = httpx.get(f"{parts.scheme}://{parts.netloc}/robots.txt", timeout=10)
    except httpx.HTTPError:
        return True  # unreachable robots.txt: treat as allowed, as crawlers conventionally do
    if resp.status_code >= 400:
        return True
    robots.parse(resp.text.splitlines())
    return robots.can_fetch(user_agent, url)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--select", default="title")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--user-agent", default=DEFAULT_UA)
    args = parser.parse_args()

    if not allowed(args.url, args.user_agent):
        print(f"Error: robots.txt disallows fetching {args.url}", file=sys.stderr)
        return 3
    try:
        resp = httpx.get(args.url, headers={"User-Agent": args.user_agent}, timeout=20,
                         follow_redirects=True)
        resp.raise_for_status()
    except httpx.HTTPError as exc:
        print(f"Error: fetching {args.url} failed: {exc}", file=sys.stderr)
        return 1

    soup = BeautifulSoup(resp.text, "html.parser")
    matches = soup.select(args.select)
    items = [" ".join(el.get_text(" ", strip=True).split()) for el in matches[: args.limit]]
    next_link = soup.select_one("a[rel=next]")
    json.dump(
        {"url": str(resp.url), "status": resp.status_code, "matched": len(matches), "items": items,
         "next": urljoin(str(resp.url), next_link["href"]) if next_link else None},
        sys.stdout, indent=2, ensure_ascii=False,
    )
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
