"""Print the average pods/s of the report `schedsvc-load --json /tmp/ab.json` wrote."""

import json

with open("/tmp/ab.json") as f:
    print(round(json.load(f)["dataItems"][0]["data"]["Average"]))
