#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image (Ubuntu with python3).
set -euo pipefail
apt-get update
apt-get install -y python3 python3-pip
pip3 install mctsviz
