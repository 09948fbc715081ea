// What the tracker's HTTP client is wired with: its pacing, and the token and the header that carries
// it. One module, so a tracker command loads one chunk for them.
export { trackerPacer } from './tracker-pacing.js';
export { trackerCredentials, trackerTokenHeader } from './tracker-token.js';
