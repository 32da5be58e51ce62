"""Everything that talks to GitHub or to the Actions runner."""
