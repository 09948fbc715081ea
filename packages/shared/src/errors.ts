import { ExitCode, type ExitCodeValue } from './exit-codes.js';

export interface ErrorDetails {
  /** A stable machine-readable code, e.g. `validation`, `not_found`. */
  code?: string;
  /** What to do next. Printed under the message. */
  hint?: string;
  /** The field the error is about, when there is one. */
  field?: string;
  cause?: unknown;
}

/** Base of every error opsctl expects. Anything else reaching the top is a bug and exits 1 with a stack under --debug. */
export class OpsError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly code: string;
  readonly hint?: string;
  readonly field?: string;

  constructor(message: string, exitCode: ExitCodeValue = ExitCode.failure, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.code = details.code ?? 'error';
    this.hint = details.hint;
    this.field = details.field;
  }

  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.field) out.field = this.field;
    if (this.hint) out.hint = this.hint;
    return out;
  }
}

/** Bad input: the command was not run (or nothing was sent). Exit 2. */
export class UsageError extends OpsError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.usage, { code: 'usage', ...details });
  }
}

/** A field that the contract forbids, caught before any request. Exit 2. */
export class ValidationError extends UsageError {
  constructor(field: string, message: string, hint?: string) {
    super(`${field}: ${message}`, { code: 'validation', field, hint });
  }
}

/** Authentication needed or refused. Exit 4. */
export class AuthError extends OpsError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.auth, { code: 'auth', ...details });
  }
}

/** Some of the work was done and some was not, or a long operation halted safely. Exit 3. */
export class PartialError extends OpsError {
  readonly summary?: unknown;
  constructor(message: string, details: ErrorDetails & { summary?: unknown } = {}) {
    super(message, ExitCode.partial, { code: 'partial', ...details });
    this.summary = details.summary;
  }
  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), ...(this.summary === undefined ? {} : { summary: this.summary }) };
  }
}

/** Ctrl-C or SIGTERM. Exit 130. */
export class InterruptedError extends OpsError {
  constructor(message = 'interrupted') {
    super(message, ExitCode.interrupted, { code: 'interrupted' });
  }
}

/** A service answered with an error status. Carries the status and the server's own message. */
export class ApiError extends OpsError {
  readonly status: number;
  readonly service: string;
  readonly body: unknown;

  constructor(service: string, status: number, serverMessage: string, body: unknown, details: ErrorDetails = {}) {
    // 401, or a 403 for a missing OAuth scope (code insufficient_scope): signing in again is the fix
    const exit = status === 401 || details.code === 'insufficient_scope' ? ExitCode.auth : ExitCode.failure;
    super(`${service}: HTTP ${status}: ${serverMessage}`, exit, { code: details.code ?? `http_${status}`, ...details });
    this.status = status;
    this.service = service;
    this.body = body;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), status: this.status, service: this.service };
  }
}

/** A request that never got an answer: refused connection, DNS failure, timeout. */
export class NetworkError extends OpsError {
  constructor(message: string, details: ErrorDetails = {}) {
    super(message, ExitCode.failure, { code: 'network', ...details });
  }
}

export function isOpsError(err: unknown): err is OpsError {
  return err instanceof OpsError;
}
