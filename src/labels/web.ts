/**
 * The web page of a label, for `labels view ID --web`. The label API gives no web link (the discovery
 * documents have no URL field on a label), so the address is built: on Google's service
 * (drivelabels.googleapis.com) the label's page in the labels manager, whose documented address is
 * https://drive.google.com/labels; on any other label service (the mock) `BASE/labels/ID`, the page
 * the embedded mock serves.
 */
export function labelWebUrl(serviceBase: string, id: string): string {
  const base = new URL(serviceBase);
  const safeId = encodeURIComponent(id);
  if (base.hostname === 'drivelabels.googleapis.com') return `https://drive.google.com/labels/${safeId}`;
  return new URL(`/labels/${safeId}`, base.origin).href;
}
