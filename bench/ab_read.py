import json;d=json.load(open("/tmp/ab.json"));print(round(d["dataItems"][0]["data"]["Average"]))
