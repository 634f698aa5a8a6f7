// Signing keys for the local authorization server (server.mjs) and for tests that forge tokens.
//
//   node keys.mjs OUT_DIR [KID:TYPE ...]      TYPE is rsa (RS256, 2048 bit) or ec (ES256, P-256)
//
// Default: rsa-1:rsa ec-1:ec. Writes, for every key, OUT_DIR/KID.json (the private JWK with
// kid, alg and use) plus OUT_DIR/KID.pem (private key: PKCS#1 for RSA, PKCS#8 for EC) and
// OUT_DIR/KID.pub.pem (SPKI public key); and OUT_DIR/jwks.json, the private JWKS of all keys given, in the order given
// (the first key of a type signs). Test-only material: never use these keys for anything real.
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [outDir, ...specs] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: node keys.mjs OUT_DIR [KID:rsa|KID:ec ...]');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });

const keys = [];
for (const spec of specs.length ? specs : ['rsa-1:rsa', 'ec-1:ec']) {
  const [kid, type] = spec.split(':');
  let pair;
  let alg;
  if (type === 'rsa') {
    pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    alg = 'RS256';
  } else if (type === 'ec') {
    pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    alg = 'ES256';
  } else {
    console.error(`unknown key type in ${spec}: use rsa or ec`);
    process.exit(2);
  }
  const jwk = { ...pair.privateKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  writeFileSync(join(outDir, `${kid}.json`), JSON.stringify(jwk, null, 2));
  const pemType = type === 'rsa' ? 'pkcs1' : 'pkcs8';
  writeFileSync(join(outDir, `${kid}.pem`), pair.privateKey.export({ format: 'pem', type: pemType }));
  writeFileSync(join(outDir, `${kid}.pub.pem`), pair.publicKey.export({ format: 'pem', type: 'spki' }));
  keys.push(jwk);
}
writeFileSync(join(outDir, 'jwks.json'), JSON.stringify({ keys }, null, 2));
