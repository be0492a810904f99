import { readFileSync } from 'node:fs';
import { repoPath } from '../../repo-root.js';
import Ajv2020Module, { type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * The trip record's JSON Schema (src/api/upload/trip-record.schema.json): the contract the SDK and partner
 * files follow. The upload validates with it and the OpenAPI document publishes it, so the two
 * cannot drift apart. `x-rejectReason` names the loader's reason for a property that breaks it.
 */
export interface PropertySchema {
  'x-rejectReason'?: string;
  'x-rejectReasonFor'?: Record<string, string>;
  [key: string]: unknown;
}

export interface TripRecordSchema {
  properties: Record<string, PropertySchema>;
  $defs: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

const file = repoPath('src', 'api', 'upload', 'trip-record.schema.json');
export const tripRecordSchema = JSON.parse(readFileSync(file, 'utf8')) as TripRecordSchema;

// ajv's CommonJS build: the class is the module itself
const Ajv2020 = Ajv2020Module as unknown as typeof Ajv2020Module.default;
let validator: ValidateFunction | undefined;

/**
 * The record schema's validator, compiled on first use: the compile is most of what loading this
 * module costs, at every API process's start, and most processes never take an upload.
 */
export function tripRecordValidator(): ValidateFunction {
  validator ??= new Ajv2020({
    allErrors: true,
    strict: true,
    allowUnionTypes: true,
    keywords: ['x-rejectReason', 'x-rejectReasonFor'],
  }).compile(tripRecordSchema);
  return validator;
}

/**
 * The schema for the OpenAPI document's components: its definitions under
 * `#/components/schemas/`, the record itself as `TripRecord`.
 */
export function tripRecordComponents(): Record<string, unknown> {
  const rebase = (value: unknown): unknown =>
    JSON.parse(
      JSON.stringify(value)
        .replaceAll('"#/$defs/', '"#/components/schemas/')
        .replaceAll('"$ref":"#"', '"$ref":"#/components/schemas/TripRecord"'),
    );
  // FileRecord (the record with its identity, as in a landing file) is not part of the API
  const {
    $schema: _s,
    $id: _i,
    $defs: { FileRecord: _f, ...defs },
    ...record
  } = tripRecordSchema;
  return { TripRecord: rebase(record), ...(rebase(defs) as Record<string, unknown>) };
}
