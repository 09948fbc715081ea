// The reference for kv-s3.bench.mjs: one file uploaded with the AWS SDK's own multipart upload, as `aws s3 cp` does.
//   node s3-upload.mjs FILE ENDPOINT BUCKET KEY   (credentials from the environment)
import { createReadStream } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

const [file, endpoint, bucket, key] = process.argv.slice(2);
const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
await new Upload({ client, params: { Bucket: bucket, Key: key, Body: createReadStream(file) }, partSize: 16 * 1024 * 1024, queueSize: 2 }).done();
