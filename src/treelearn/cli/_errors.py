"""The one error type of the command line: a mistake of the user's."""


class UserError(Exception):
    """A mistake of the user's (bad argument, missing file, unusable table): printed as one
    line, exit status 2 (``--debug`` shows the traceback)."""
