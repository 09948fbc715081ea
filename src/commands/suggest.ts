// Kept for the verbs that import it here; the completion generator reads what it records (completion/suggest.ts).
export { suggest } from '../completion/suggest.js';
