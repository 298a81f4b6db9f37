import shutil
import sys
from datetime import date
from pathlib import Path


def main():
    source, dest = Path(sys.argv[1]), Path(sys.argv[2])
    target = dest / f"backup-{date.today()}"
    shutil.copytree(source, target)
    print(f"copied {source} to {target}")


if __name__ == "__main__":
    main()
