// The least a script with the official tracker client does to list labels: what `opsctl tracker labels
// list` is compared with in npm run bench (same server, same run). Reads SHORTCUT_URL and SHORTCUT_TOKEN.
import { ShortcutClient } from '@shortcut/client';

const client = new ShortcutClient(process.env.SHORTCUT_TOKEN, { baseURL: process.env.SHORTCUT_URL });
const { data } = await client.listLabels();
process.stdout.write(data.map((l) => `${l.id}\t${l.name}\t${l.color ?? ''}\t${l.archived}\t${l.description ?? ''}\n`).join(''));
