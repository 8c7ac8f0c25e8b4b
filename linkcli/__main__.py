"""``python -m linkcli``: the same command line as the ``linkcli`` console script."""

from linkcli.cli.app import main

if __name__ == "__main__":
    main()
