#!/bin/sh
# Generates a throw-away test PKI for an HTTPS test origin, with the openssl CLI.
#
#   certs/make-test-pki.sh OUTDIR [NAME...]
#
# NAME: DNS names or IP literals for the origin's certificate (default: localhost 127.0.0.1 ::1).
# Writes into OUTDIR (created 0700; keys 0600, certificates 0644):
#   ca.pem, ca-key.pem                  test CA (not the harrec CA): pass ca.pem to --upstream-ca
#   server.pem, server-key.pem          origin certificate for NAME..., signed by the test CA
#   wrong-host.pem, wrong-host-key.pem  signed by the test CA, SAN DNS:wrong-host.invalid only
#   self-signed.pem, self-signed-key.pem  self-signed certificate for NAME... (untrusted)
# Everything is generated at test time; no key is ever committed. See certs/README.md.
set -eu

if [ $# -lt 1 ]; then
    echo "usage: $0 OUTDIR [NAME...]" >&2
    exit 2
fi
out=$1
shift
[ $# -gt 0 ] || set -- localhost 127.0.0.1 ::1

san=""
for name in "$@"; do
    # All digits and dots: an IPv4 literal; anything with ':' is IPv6; else a DNS name.
    if printf '%s' "$name" | grep -Eq '^[0-9.]+$|:'; then kind=IP; else kind=DNS; fi
    san="${san:+$san,}$kind:$name"
done
first=$1

mkdir -p "$out"
chmod 700 "$out"
umask 077
days=30
serial() { echo "0x$(openssl rand -hex 16 | sed 's/^./4/')"; }

cat > "$out/ca.ext" <<EXT
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EXT
leaf_ext() {
    cat <<EXT
subjectAltName = $1
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
EXT
}

newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# Test CA.
newkey "$out/ca-key.pem"
openssl req -new -key "$out/ca-key.pem" -subj "/CN=harrec test CA/O=harrec tests" -out "$out/ca.csr"
openssl x509 -req -in "$out/ca.csr" -signkey "$out/ca-key.pem" -days $days -sha256 \
    -set_serial "$(serial)" -extfile "$out/ca.ext" -out "$out/ca.pem" 2>/dev/null

# Leaves signed by the test CA.
sign_leaf() { # name cn san
    newkey "$out/$1-key.pem"
    openssl req -new -key "$out/$1-key.pem" -subj "/CN=$2" -out "$out/$1.csr"
    leaf_ext "$3" > "$out/$1.ext"
    openssl x509 -req -in "$out/$1.csr" -CA "$out/ca.pem" -CAkey "$out/ca-key.pem" -days $days -sha256 \
        -set_serial "$(serial)" -extfile "$out/$1.ext" -out "$out/$1.pem" 2>/dev/null
}
sign_leaf server "$first" "$san"
sign_leaf wrong-host wrong-host.invalid "DNS:wrong-host.invalid"

# Self-signed (no CA): clients must reject it.
newkey "$out/self-signed-key.pem"
leaf_ext "$san" | sed 's/^authorityKeyIdentifier.*//' > "$out/self-signed.ext"
openssl req -new -key "$out/self-signed-key.pem" -subj "/CN=$first" -out "$out/self-signed.csr"
openssl x509 -req -in "$out/self-signed.csr" -signkey "$out/self-signed-key.pem" -days $days -sha256 \
    -set_serial "$(serial)" -extfile "$out/self-signed.ext" -out "$out/self-signed.pem" 2>/dev/null

rm -f "$out"/*.csr "$out"/*.ext
chmod 644 "$out"/ca.pem "$out"/server.pem "$out"/wrong-host.pem "$out"/self-signed.pem
openssl verify -CAfile "$out/ca.pem" "$out/server.pem" "$out/wrong-host.pem" >/dev/null
