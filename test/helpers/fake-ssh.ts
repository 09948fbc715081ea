/**
 * A stand-in `ssh` for the template tests: `logLine` records its argv (each test its own way), then it
 * parses options as OpenSSH does, runs a ProxyCommand locally (what an option smuggled in as a host
 * would do), and runs the remote command with `sh -c`, as the remote user's shell would.
 */
export function fakeSshScript(test: string, logLine: string): string {
  return `#!/bin/sh
# FAKE ssh (opsctl test ${test}): logs its argv; OpenSSH's option parsing; ProxyCommand runs locally; the remote command runs with sh -c.
${logLine}
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -o) case "$2" in ProxyCommand=*) sh -c "\${2#ProxyCommand=}" ;; esac; shift 2 ;;
    -oProxyCommand=*) sh -c "\${1#-oProxyCommand=}"; shift ;;
    -[BbcDEeFIiJLlmOoPpQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || exit 255
shift
exec sh -c "$*"
`;
}
