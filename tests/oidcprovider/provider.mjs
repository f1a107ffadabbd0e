// oidc-provider (the certified OpenID Connect server for node) on a loopback TLS port,
// for the OAuth tests of serve --http. Reads its settings as JSON from argv[2]; prints
// {"issuer": ...} on stdout once it listens. Sign-in and consent are finished at once
// for the account named in the X-Test-Account header, granting only the scopes that
// account is allowed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const settings = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const entry = path.join(settings.modules, 'node_modules', 'oidc-provider', 'lib', 'index.js');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);

const signing = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const jwk = { ...signing.export({ format: 'jwk' }), kid: 'test-1', alg: 'RS256', use: 'sig' };
const server = https.createServer({
  key: fs.readFileSync(settings.tls_key),
  cert: fs.readFileSync(settings.tls_cert),
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `https://localhost:${server.address().port}`;
const resource = settings.resource;
const scopes = settings.scopes.join(' ');

const provider = new Provider(issuer, {
  jwks: { keys: [jwk] },
  clients: [
    {
      client_id: settings.service.client_id,
      client_secret: settings.service.client_secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: settings.service.scope,
    },
  ],
  scopes: ['openid', 'offline_access', ...settings.scopes],
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return {
          scope: scopes,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const account = ctx.get('x-test-account');
  const allowed = settings.accounts[account] || [];
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: account } }, { mergeWithLastSubmission: false });
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    const asked = String(details.params.scope || '').split(' ');
    const own = (name) => ['openid', 'offline_access'].includes(name) || allowed.includes(name);
    const granted = asked.filter(own).join(' ');
    const refused = asked.filter((name) => !own(name)).join(' ');
    grant.addOIDCScope(granted);
    grant.addResourceScope(resource, granted);
    if (refused) {
      grant.rejectOIDCScope(refused);
      grant.rejectResourceScope(resource, refused);
    }
    const grantId = await grant.save();
    await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }
  ctx.respond = false;
});

server.on('request', provider.callback());
process.stdout.write(JSON.stringify({ issuer }) + '\n');
