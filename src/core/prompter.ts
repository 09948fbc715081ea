/** Questions to the person at the terminal (src/wiring/prompter.ts asks them; tests pass their own). */
export interface Prompter {
  /**
   * Asks yes/no. With --yes: true. Without a terminal: fails naming `flag`. `shown`: what the question
   * is about, already written to stderr (a plan); shown again before it when the question is asked on
   * the terminal itself because stderr goes elsewhere (`2>log`).
   */
  confirm(message: string, opts?: { flag?: string; default?: boolean; shown?: string }): Promise<boolean>;
  /** Asks for text. Without a terminal: the default, or fails naming `flag`. */
  input(message: string, opts: { flag: string; default?: string }): Promise<string>;
  /** Asks for a secret; what is typed is not shown (a * per key). Without a terminal: fails with `hint`. */
  password(message: string, opts: { hint: string; field?: string }): Promise<string>;
  /** Asks to pick one of `choices` (arrow keys). Without a terminal: fails naming `flag`. */
  select?(message: string, opts: { flag: string; choices: Array<{ value: string; name: string }>; default?: string }): Promise<string>;
}
