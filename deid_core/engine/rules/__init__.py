"""Declarative regex rule sets (conf/rules/*.toml): loading, compiling and the RuleTagger."""
