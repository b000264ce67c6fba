"""`python -m pipelines.exports` (`pipelines.exports.cli`). Nothing the export job ships to workers lives in
this `__main__`, which only the launching process has."""

from pipelines.exports.cli import main

if __name__ == "__main__":
    main()
