import { z } from 'zod';

/** The shape of credentials.json: profile name → {tracker?: {token}, oauth?: {access_token, …}}. Extra keys pass. */
const Profile = z.looseObject({
  tracker: z.looseObject({ token: z.string().min(1) }).optional(),
  oauth: z
    .looseObject({
      access_token: z.string().min(1),
      refresh_token: z.string().optional(),
      scope: z.string().optional(),
      expires_at: z.number().optional(),
      refresh_expires_at: z.number().optional(),
    })
    .optional(),
});
const File = z.record(z.string(), Profile, { error: 'must be a JSON object of profiles' });

/** The first problem of a credential file's content as `path: message` (never quoting a value), or undefined. */
export function credentialFileProblem(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return 'is not a JSON object of profiles';
  const r = File.safeParse(data);
  if (r.success) return undefined;
  const issue = r.error.issues[0]!;
  return `is not valid at ${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`;
}
