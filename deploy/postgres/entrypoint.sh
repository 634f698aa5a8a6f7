# PostgreSQL's entrypoint (busybox sh): a first start creates the cluster in $PGDATA with the
# password of /run/secrets/pg_password for user giftgenius (scram-sha-256 over TCP), then every
# start runs the server in the foreground, listening on every address of its network.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    initdb --pgdata="$PGDATA" --username=giftgenius --pwfile=/run/secrets/pg_password \
        --auth-host=scram-sha-256 --auth-local=trust --encoding=UTF8 --locale=C
    echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "CREATE DATABASE giftgenius" | postgres --single -D "$PGDATA" postgres > /dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories='' -c jit=off
