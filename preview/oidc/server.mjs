// A real OAuth 2.1 / OpenID Connect authorization server (panva's oidc-provider) for GiftGenius's
// auth tests and the signed-in local preview. It listens on 127.0.0.1 only and is never meant
// for production: its login form accepts any username (devInteractions).
//
//   node server.mjs --jwks FILE [--port 0] [--client-id ID] [--redirect-uri URI ...]
//                   [--resource URL] [--access-token-ttl SECS]
//
// Every flag has an env variable: OIDC_JWKS, OIDC_PORT, OIDC_CLIENT_ID, OIDC_REDIRECT_URIS
// (comma-separated), OIDC_RESOURCE, OIDC_ACCESS_TOKEN_TTL.
//
// - Issuer: http://127.0.0.1:PORT (port 0 picks a free one). The first stdout line is
//   `listening http://127.0.0.1:PORT`; everything else (oidc-provider's notices included) goes
//   to stderr.
// - Signing keys: the private JWKS in --jwks (see keys.mjs); tests forge tokens with the same
//   keys. The first RSA key signs access tokens (RS256).
// - One public client (token_endpoint_auth_method none, PKCE S256 required) with the given
//   redirect URIs.
// - Resource indicators (RFC 8707): any http(s) resource the client names gets JWT access tokens
//   with aud = that resource and the scopes orders:read orders:write. --resource is the default
//   when a client names none.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';

import Provider, { errors } from 'oidc-provider';

// Keep stdout for the one line the caller parses.
console.info = (...args) => console.error(...args);
console.log = (...args) => console.error(...args);

const { values: args } = parseArgs({
  options: {
    jwks: { type: 'string', default: process.env.OIDC_JWKS },
    port: { type: 'string', default: process.env.OIDC_PORT ?? '0' },
    'client-id': { type: 'string', default: process.env.OIDC_CLIENT_ID ?? 'giftgenius-host' },
    'redirect-uri': {
      type: 'string',
      multiple: true,
      default: (process.env.OIDC_REDIRECT_URIS ?? 'http://127.0.0.1/callback').split(',').filter(Boolean),
    },
    resource: { type: 'string', default: process.env.OIDC_RESOURCE },
    'access-token-ttl': { type: 'string', default: process.env.OIDC_ACCESS_TOKEN_TTL ?? '3600' },
  },
});

if (!args.jwks) {
  console.error('server.mjs: --jwks FILE (or OIDC_JWKS) is required; generate one with `node keys.mjs DIR`');
  process.exit(2);
}
const jwks = JSON.parse(readFileSync(args.jwks, 'utf8'));
const RESOURCE_SCOPES = 'orders:read orders:write';
const accessTokenTTL = Number.parseInt(args['access-token-ttl'], 10);

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number.parseInt(args.port, 10), '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const isHttpUrl = (value) => {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'https:' || url.protocol === 'http:') && !url.hash;
};

const provider = new Provider(issuer, {
  jwks,
  clients: [
    {
      client_id: args['client-id'],
      client_name: 'GiftGenius test host',
      token_endpoint_auth_method: 'none',
      redirect_uris: args['redirect-uri'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
  ],
  // Any username logs in (the form's password is ignored); the account id is the username.
  async findAccount(_ctx, id) {
    return { accountId: id, async claims() { return { sub: id }; } };
  },
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access'],
  clientBasedCORS(_ctx, origin, client) {
    return client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin);
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? args.resource,
      useGrantedResource: () => true,
      async getResourceServerInfo(_ctx, resourceIndicator) {
        if (!isHttpUrl(resourceIndicator)) throw new errors.InvalidTarget();
        return {
          scope: RESOURCE_SCOPES,
          audience: resourceIndicator,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

server.on('request', provider.callback());
process.stdout.write(`listening ${issuer}\n`);

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
