import { chmod, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { AuthError, OpsError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

/**
 * `opsctl auth token --adc FILE`: a credentials file in the shape of gcloud's application-default
 * credentials, for other tools to read (GOOGLE_APPLICATION_CREDENTIALS=FILE). A stored sign-in gives an
 * `authorized_user` file (its client and refresh token); a keyless CI job (OPSCTL_OIDC_TOKEN_FILE) an
 * `external_account` file that names the CI's token file and the provider's token endpoint, so the tool
 * makes the RFC 8693 exchange itself. Mode 0600; the secrets go only into the file.
 */
export async function writeAdc(ctx: Context, file: string, account: string | undefined): Promise<CommandResult> {
  const { oauthSettings } = await import('../../auth/settings.js');
  const settings = await oauthSettings(ctx);
  let doc: Record<string, unknown> & { type: string };
  const ciFile = ctx.env.OPSCTL_OIDC_TOKEN_FILE;
  if (ciFile && account === undefined) {
    doc = {
      type: 'external_account',
      audience: settings.clientId,
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: settings.tokenUrl,
      credential_source: { file: resolve(ctx.cwd, ciFile) },
    };
  } else {
    const { freshAccessToken } = await import('../../auth/session.js');
    const t = await freshAccessToken(ctx, { account });
    if (!t.refresh_token) {
      throw new AuthError(`${t.account ?? 'the active account'} has no refresh token: an authorized_user file needs one`, {
        code: 'no_refresh_token',
        hint: 'sign in with offline access (opsctl login), or in CI set OPSCTL_OIDC_TOKEN_FILE for an external_account file',
      });
    }
    doc = {
      type: 'authorized_user',
      client_id: settings.clientId,
      ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}),
      refresh_token: t.refresh_token,
      token_uri: settings.tokenUrl,
      ...(t.account ? { account: t.account } : {}),
    };
  }
  const path = resolve(ctx.cwd, file);
  try {
    await writeFile(path, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600 });
    await chmod(path, 0o600);
  } catch (err) {
    throw new OpsError(`--adc: ${path} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 1, {
      field: 'adc',
      hint: 'give a path in a directory you can write',
    });
  }
  return { data: { path, type: doc.type }, text: '', message: `wrote ${doc.type} credentials to ${path} (mode 0600): GOOGLE_APPLICATION_CREDENTIALS=${path}` };
}
