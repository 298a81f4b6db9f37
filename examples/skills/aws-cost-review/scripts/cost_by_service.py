#!/usr/bin/env python3
"""Print AWS cost per service per month (UnblendedCost) as JSON, using the AWS CLI.

Usage: cost_by_service.py [--months 3] [--profile NAME]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
from collections import defaultdict


def month_start(day: dt.date, back: int) -> dt.date:
    year, month = day.year, day.month - back
    while month <= 0:
        month += 12
        year -= 1
    return dt.date(year, month, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--months", type=int, default=3)
    parser.add_argument("--profile")
    args = parser.parse_args()

    today = dt.date.today()
    start, end = month_start(today, args.months - 1), today + dt.timedelta(days=1)
    cmd = [
        "aws", "ce", "get-cost-and-usage",
        "--time-period", f"Start={start},End={end}",
        "--granularity", "MONTHLY",
        "--metrics", "UnblendedCost",
        "--group-by", "Type=DIMENSION,Key=SERVICE",
        "--output", "json",
    ]
    if args.profile:
        cmd += ["--profile", args.profile]
    try:
        raw = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        print("Error: aws CLI not found on PATH", file=sys.stderr)
        return 2
    except subprocess.CalledProcessError as exc:
        print(f"Error: aws ce failed: {exc.stderr.strip()}", file=sys.stderr)
        return 1

    costs: dict[str, dict[str, float]] = defaultdict(dict)
    months = []
    for period in json.loads(raw)["ResultsByTime"]:
        month = period["TimePeriod"]["Start"][:7]
        months.append(month)
        for group in period["Groups"]:
            amount = float(group["Metrics"]["UnblendedCost"]["Amount"])
            costs[group["Keys"][0]][month] = round(amount, 2)

    rows = []
    for service, by_month in costs.items():
        last = by_month.get(months[-1], 0.0)
        prev = by_month.get(months[-2], 0.0) if len(months) > 1 else 0.0
        rows.append({"service": service, "by_month": by_month, "change": round(last - prev, 2)})
    rows.sort(key=lambda r: r["change"], reverse=True)
    json.dump({"months": months, "services": rows}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
