// The one YAML reader, shared with the mock (packages/shared): the CLI keeps this path.
export * from '@opsctl/shared/yaml.js';
