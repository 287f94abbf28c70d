"""What-if on a fork (issue 27): a simulation's steps, run on a copy-on-write fork of a cluster
that never writes the cluster itself. `steps.py` holds the domain types the server converts."""
