import os

import requests

key = os.environ["WEATHER_API_KEY"]
answer = requests.get("https://api.weather.example.com/v1/forecast",
                      headers={"Authorization": f"Bearer {key}"}, timeout=10)
print(answer.json())
