"""`python -m pipelines.citationr`. The program lives in this file, apart from the package, so that every DoFn and
function the job pickles is `pipelines.citationr.<module>.X`, which a worker imports, never `__main__.X`."""

from pipelines.citationr.cli import main

if __name__ == "__main__":
    main()
