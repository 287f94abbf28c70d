"""Tools beside the service: they may import the service and the client, nothing imports them."""
