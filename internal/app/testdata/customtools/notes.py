"""A test's own custom tool file (not upstream's)."""


def lookup(country: str, prefix: str) -> str:
    """Look up a capital.

    Args:
        country: The country.
        prefix: Set by the config's preset_args.
    """
    return prefix + {"France": "Paris"}.get(country, "unknown")
