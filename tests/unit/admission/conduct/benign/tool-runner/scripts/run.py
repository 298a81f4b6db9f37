import os
import subprocess
import urllib.request

env = os.environ.copy()
env["LINT_CACHE"] = ".cache"
urllib.request.urlretrieve("https://tools.example.com/lint-1.2.tar.gz", "lint.tar.gz")
result = subprocess.run(["./lint", "."], env=env, check=False)
print(result.returncode)
