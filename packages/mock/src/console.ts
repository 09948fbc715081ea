/**
 * @opsctl/mock/console: the vocabulary of the mock authorization server's developer console and security
 * events (client types and fields, integrity actions, event kinds), for the `opsctl mock clients …` and
 * `opsctl mock events …` verbs, which check their input before they call the console's HTTP API. Only
 * those verbs load it; the console itself (services/oauth/console*.ts, events.ts, delivery.ts,
 * integrity.ts, admin.ts) loads on the first request to one of its routes.
 */
export {
  checkClientFields,
  CONSOLE_CLIENT_TYPES,
  EVENT_KINDS,
  INTEGRITY_ACTIONS,
  integrityProblem,
  type ClientType,
  type EventKind,
  type IntegrityAction,
} from './services/oauth/console-schema.js';
