"""Tools beside the service: they may import the service and the client, which never import
them (setup.py runs gen_contract at build time)."""
