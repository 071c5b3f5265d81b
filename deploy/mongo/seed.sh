#!/bin/sh
# One-shot seed for the compose stack: each /seed/NAME.jsonl (deploy/demo, Extended JSON lines as
# mongoexport writes them) becomes the collection shop.NAME, replacing what was there.
set -eu
# MongoDB's first start runs a temporary server on localhost only; wait for the real one.
tries=0
until mongosh "$SEED_MONGODB_URI" --quiet --eval "db.runCommand({ping: 1}).ok" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then
        echo "mongo-seed: MongoDB did not answer in 2 minutes" >&2
        exit 1
    fi
    sleep 2
done
for file in /seed/*.jsonl; do
    name=$(basename "$file" .jsonl)
    mongoimport --uri "$SEED_MONGODB_URI" --collection "$name" --drop --file "$file"
done
