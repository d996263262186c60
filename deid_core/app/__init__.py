"""The application: run options, the Arrow batch path shared with the Spark job, the local runner,
the manifest, the `deid` command line and its subcommands. Uses the engine and training layers."""
