// What the tracker's HTTP client takes from this room: its pacing, and the token and the header that
// carries it. One module, so a tracker command loads one chunk for them.
export { trackerPacer } from './pacing.js';
export { trackerCredentials, trackerTokenHeader } from './token.js';
