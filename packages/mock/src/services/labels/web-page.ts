import { MockError, pathParam, reply, type MockReply, type MockRequest } from '../../http.js';

/** Where a label's web page is (`labels view ID --web` on a service other than Google's opens it). */
export const WEB_PAGE_PATH = '/labels/:id';

/**
 * The mock's stand-in for the labels manager's page of one label: a minimal HTML page, public as a web
 * page is (a browser sends no bearer token), so it names only the id it was given, never the label's
 * contents or whether it exists. An id that is not a label id's shape is a 404.
 */
export function labelWebPage(req: MockRequest): MockReply {
  const id = pathParam(req, 'id');
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw new MockError(404, 'NOT_FOUND', 'no such page: a label id is letters, digits, - and _');
  return reply.html(
    200,
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Label ${id}</title></head>\n` +
      `<body><h1>Label ${id}</h1><p>The mock label service's page for this label. Its fields: <code>opsctl labels get ${id}</code>.</p></body></html>\n`,
  );
}
