#!/bin/sh
# Reads {"text": "..."} and answers it in capitals, as a JSON string.
tr '[:lower:]' '[:upper:]' | sed 's/.*"TEXT": *"\([^"]*\)".*/"\1"/'
