"""`python -m rubric` is the same as the `rubric` console command."""

from rubric.cli.main import main

if __name__ == "__main__":
    main()
