/**
 * The compiled descriptors of proto/ (jwt.proto, health, reflection), indexed for server
 * reflection.
 *
 * The build compiles proto/ with buf into one `google.protobuf.FileDescriptorSet`
 * (byte for byte what `protoc --include_imports --descriptor_set_out` writes), so clients
 * get protoc's descriptors: json_name on every field, map entries as protoc names them.
 * Each file's FileDescriptorProto is served as those bytes, never re-encoded; this module
 * only reads enough of them to know which file declares which symbol and what it imports.
 */
import type { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JwtGrpcError } from '../base/errors.js';
import { PACKAGE_ROOT } from '../base/package-root.js';

/** Where `npm run build` writes the descriptor set (shipped in the package). */
export const DESCRIPTOR_SET_PATH = join(PACKAGE_ROOT, 'dist', 'proto', 'descriptor-set.binpb');

/** One compiled .proto file. */
export interface DescriptorFile {
  /** Its name as compiled, relative to proto/: `jwt.proto`, `grpc/health/v1/health.proto`. */
  readonly name: string;
  /** The serialized FileDescriptorProto, as the compiler wrote it. */
  readonly bytes: Buffer;
  /** Names of the files it imports. */
  readonly dependencies: readonly string[];
}

/** The files of a descriptor set and the symbols they declare. */
export interface DescriptorIndex {
  readonly files: ReadonlyMap<string, DescriptorFile>;
  /**
   * Fully qualified names (no leading dot) of every service, method, message, field,
   * oneof, enum, enum value and extension, to the file declaring it. Enum values are
   * scoped as protobuf scopes them: beside their enum (`pkg.Message.VALUE`).
   */
  readonly symbols: ReadonlyMap<string, DescriptorFile>;
  /** Fully qualified names of the services. */
  readonly services: ReadonlySet<string>;
  /** Fully qualified names of the message types. */
  readonly messages: ReadonlySet<string>;
  /** Extensions by extended message type, then field number. */
  readonly extensions: ReadonlyMap<string, ReadonlyMap<number, DescriptorFile>>;
}

/**
 * Reads the descriptor set at `path` (default: the one the build wrote). Throws
 * `JwtGrpcError` (`ERR_FILE`) when it is missing.
 *
 * @example
 * ```ts
 * const services = declaredServices(readDescriptorSet()); // Set { 'jwt.services.JwtService', ... }
 * ```
 */
export function readDescriptorSet(path: string = DESCRIPTOR_SET_PATH): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `cannot read the compiled descriptor set ${path}: build the package (npm run build)`, {
      field: 'descriptorSet',
      cause: err,
    });
  }
}

/**
 * Reads and indexes the descriptor set at `path` (default: the one the build wrote).
 * Throws `JwtGrpcError` (`ERR_FILE`) when it is missing or is not a descriptor set.
 *
 * @example
 * ```ts
 * const index = loadDescriptorSet();
 * index.symbols.get('grpc.health.v1.Health.Check')?.name; // 'grpc/health/v1/health.proto'
 * ```
 */
export function loadDescriptorSet(path: string = DESCRIPTOR_SET_PATH): DescriptorIndex {
  return indexOrRefuse(readDescriptorSet(path), path);
}

/** {@link indexDescriptorSet}, its errors naming the file the bytes came from. @internal */
export function indexOrRefuse(set: Buffer, path: string = DESCRIPTOR_SET_PATH): DescriptorIndex {
  return readingSet(path, () => indexDescriptorSet(set));
}

/** Runs `read` over a descriptor set's bytes; a failure is `ERR_FILE`: `${what} is not a FileDescriptorSet: why`. */
function readingSet<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new JwtGrpcError('ERR_FILE', `${what} is not a FileDescriptorSet: ${(err as Error).message}`, {
      field: 'descriptorSet',
      cause: err,
    });
  }
}

/**
 * The fully qualified names of the services a descriptor set declares, read without
 * indexing the rest (messages, fields, enums): what a server checks at start, where the
 * whole index waits for the first reflection call (indexing costs ~2.5 ms of a start on
 * one core). Throws `JwtGrpcError` (`ERR_FILE`) on bytes that are not a descriptor set.
 *
 * @example
 * ```ts
 * declaredServices(readDescriptorSet()).has('grpc.health.v1.Health'); // true
 * ```
 */
export function declaredServices(set: Buffer): Set<string> {
  return readingSet('the descriptor set', () => {
    const services = new Set<string>();
    for (const field of readFields(set)) {
      if (field.number !== FILE_DESCRIPTOR_SET.file) continue;
      let pkg = '';
      const declared: Buffer[] = [];
      for (const fileField of readFields(lengthDelimited(field, 'FileDescriptorSet.file'))) {
        if (fileField.number === FILE.package) pkg = text(fileField, 'FileDescriptorProto.package');
        else if (fileField.number === FILE.service) declared.push(lengthDelimited(fileField, 'FileDescriptorProto.service'));
      }
      for (const service of declared) services.add(qualify(pkg, nameOf(service, SERVICE.name)));
    }
    return services;
  });
}

/** Indexes the bytes of a FileDescriptorSet. Throws `JwtGrpcError` (`ERR_FILE`) on bytes that are not one. */
export function indexDescriptorSet(set: Buffer): DescriptorIndex {
  const files = new Map<string, DescriptorFile>();
  const symbols = new Map<string, DescriptorFile>();
  const services = new Set<string>();
  const messages = new Set<string>();
  const extensions = new Map<string, Map<number, DescriptorFile>>();

  for (const field of readFields(set)) {
    if (field.number !== FILE_DESCRIPTOR_SET.file) continue;
    const proto = lengthDelimited(field, 'FileDescriptorSet.file');
    const file = readFile(proto);
    if (files.has(file.name)) throw malformed(`file ${file.name} appears twice`);
    const entry: DescriptorFile = { name: file.name, bytes: proto, dependencies: file.dependencies };
    files.set(file.name, entry);
    for (const symbol of file.symbols) {
      if (symbols.has(symbol.name)) throw malformed(`symbol ${symbol.name} is declared twice`);
      symbols.set(symbol.name, entry);
      if (symbol.kind === 'service') services.add(symbol.name);
      if (symbol.kind === 'message') messages.add(symbol.name);
    }
    for (const { extendee, number } of file.extensions) {
      let byNumber = extensions.get(extendee);
      if (byNumber === undefined) extensions.set(extendee, (byNumber = new Map()));
      byNumber.set(number, entry);
    }
  }
  for (const file of files.values()) {
    const missing = file.dependencies.find((dependency) => !files.has(dependency));
    if (missing !== undefined) throw malformed(`${file.name} imports ${missing}, which the set lacks (compile with imports)`);
  }
  return { files, symbols, services, messages, extensions };
}

/**
 * What a reflection answer carries for `file`: its bytes, then those of its imports
 * breadth first, each once, less the files in `sent` (those already sent on the
 * stream; `file` itself is always sent), as grpc-go's reflection server answers.
 * Adds what it returns to `sent`.
 *
 * @example
 * ```ts
 * const sent = new Set<string>();
 * const file = index.symbols.get('jwt.services.JwtService');
 * if (file !== undefined) fileWithImports(index, file, sent); // [jwt.proto's bytes]
 * ```
 */
export function fileWithImports(index: DescriptorIndex, file: DescriptorFile, sent: Set<string>): Buffer[] {
  const out = [file.bytes];
  sent.add(file.name);
  const seen = new Set([file.name]);
  const queue = [...file.dependencies];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const dependency = index.files.get(name);
    // The index refuses a set with a missing import; the check keeps this total.
    if (seen.has(name) || dependency === undefined) continue;
    seen.add(name);
    if (!sent.has(name)) {
      sent.add(name);
      out.push(dependency.bytes);
    }
    queue.push(...dependency.dependencies);
  }
  return out;
}

// Field numbers of google/protobuf/descriptor.proto that the index reads.
const FILE_DESCRIPTOR_SET = { file: 1 } as const;
const FILE = { name: 1, package: 2, dependency: 3, messageType: 4, enumType: 5, service: 6, extension: 7 } as const;
const MESSAGE = { name: 1, field: 2, nestedType: 3, enumType: 4, extension: 6, oneofDecl: 8 } as const;
const FIELD = { name: 1, extendee: 2, number: 3 } as const;
const ENUM = { name: 1, value: 2 } as const;
const SERVICE = { name: 1, method: 2 } as const;
/** OneofDescriptorProto, EnumValueDescriptorProto and MethodDescriptorProto: name is 1. */
const NAME = 1;

interface DeclaredSymbol {
  readonly name: string;
  readonly kind: 'service' | 'message' | 'other';
}

/** What {@link readFile} gathers from one FileDescriptorProto. */
interface ReadFile {
  name: string;
  readonly dependencies: string[];
  readonly symbols: DeclaredSymbol[];
  readonly extensions: { extendee: string; number: number }[];
}

function readFile(proto: Buffer): ReadFile {
  const file: ReadFile = { name: '', dependencies: [], symbols: [], extensions: [] };
  let pkg = '';
  const messages: Buffer[] = [];
  const enums: Buffer[] = [];
  const services: Buffer[] = [];
  const extensions: Buffer[] = [];
  for (const field of readFields(proto)) {
    switch (field.number) {
      case FILE.name:
        file.name = text(field, 'FileDescriptorProto.name');
        break;
      case FILE.package:
        pkg = text(field, 'FileDescriptorProto.package');
        break;
      case FILE.dependency:
        file.dependencies.push(text(field, 'FileDescriptorProto.dependency'));
        break;
      case FILE.messageType:
        messages.push(lengthDelimited(field, 'FileDescriptorProto.message_type'));
        break;
      case FILE.enumType:
        enums.push(lengthDelimited(field, 'FileDescriptorProto.enum_type'));
        break;
      case FILE.service:
        services.push(lengthDelimited(field, 'FileDescriptorProto.service'));
        break;
      case FILE.extension:
        extensions.push(lengthDelimited(field, 'FileDescriptorProto.extension'));
        break;
    }
  }
  if (file.name === '') throw malformed('a FileDescriptorProto has no name');
  for (const message of messages) readMessage(message, pkg, file);
  for (const enumType of enums) readEnum(enumType, pkg, file);
  for (const service of services) readService(service, pkg, file);
  for (const extension of extensions) readExtension(extension, pkg, file);
  return file;
}

function qualify(scope: string, name: string): string {
  return scope === '' ? name : `${scope}.${name}`;
}

function readMessage(proto: Buffer, scope: string, file: ReadFile): void {
  const name = qualify(scope, nameOf(proto, MESSAGE.name));
  file.symbols.push({ name, kind: 'message' });
  for (const field of readFields(proto)) {
    switch (field.number) {
      case MESSAGE.field:
        file.symbols.push({ name: qualify(name, nameOf(lengthDelimited(field, 'DescriptorProto.field'), FIELD.name)), kind: 'other' });
        break;
      case MESSAGE.oneofDecl:
        file.symbols.push({ name: qualify(name, nameOf(lengthDelimited(field, 'DescriptorProto.oneof_decl'), NAME)), kind: 'other' });
        break;
      case MESSAGE.nestedType:
        readMessage(lengthDelimited(field, 'DescriptorProto.nested_type'), name, file);
        break;
      case MESSAGE.enumType:
        readEnum(lengthDelimited(field, 'DescriptorProto.enum_type'), name, file);
        break;
      case MESSAGE.extension:
        readExtension(lengthDelimited(field, 'DescriptorProto.extension'), name, file);
        break;
    }
  }
}

function readEnum(proto: Buffer, scope: string, file: ReadFile): void {
  file.symbols.push({ name: qualify(scope, nameOf(proto, ENUM.name)), kind: 'other' });
  for (const field of readFields(proto)) {
    if (field.number === ENUM.value) {
      // C++ scoping: an enum's values are siblings of the enum, not its children.
      file.symbols.push({ name: qualify(scope, nameOf(lengthDelimited(field, 'EnumDescriptorProto.value'), NAME)), kind: 'other' });
    }
  }
}

function readService(proto: Buffer, scope: string, file: ReadFile): void {
  const name = qualify(scope, nameOf(proto, SERVICE.name));
  file.symbols.push({ name, kind: 'service' });
  for (const field of readFields(proto)) {
    if (field.number === SERVICE.method) {
      file.symbols.push({ name: qualify(name, nameOf(lengthDelimited(field, 'ServiceDescriptorProto.method'), NAME)), kind: 'other' });
    }
  }
}

function readExtension(proto: Buffer, scope: string, file: ReadFile): void {
  let name = '';
  let extendee = '';
  let number = 0;
  for (const field of readFields(proto)) {
    if (field.number === FIELD.name) name = text(field, 'FieldDescriptorProto.name');
    else if (field.number === FIELD.extendee) extendee = text(field, 'FieldDescriptorProto.extendee');
    else if (field.number === FIELD.number) number = varint(field, 'FieldDescriptorProto.number');
  }
  if (name === '' || extendee === '') throw malformed(`an extension in ${file.name} has no name or extendee`);
  file.symbols.push({ name: qualify(scope, name), kind: 'other' });
  // A compiled set names types fully qualified with a leading dot: `.pkg.Message`.
  file.extensions.push({ extendee: extendee.replace(/^\./, ''), number });
}

/** The string field `number` of a message (its name); throws when it is absent. */
function nameOf(proto: Buffer, number: number): string {
  for (const field of readFields(proto)) if (field.number === number) return text(field, 'name');
  throw malformed('a descriptor has no name');
}

/** The error of bytes that are not a descriptor set: what is wrong, and where. */
function malformed(message: string): JwtGrpcError {
  return new JwtGrpcError('ERR_FILE', message, { field: 'descriptorSet' });
}

// --- protobuf wire format: just what descriptors use (varints and length-delimited fields) ---

interface WireField {
  readonly number: number;
  readonly wireType: number;
  /** The payload of a length-delimited field, or the value of a varint. */
  readonly value: Buffer | number;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;

function* readFields(buf: Buffer): Generator<WireField> {
  let pos = 0;
  const readVarint = (): number => {
    let value = 0;
    for (let shift = 0; shift < 64; shift += 7) {
      if (pos >= buf.length) throw malformed('truncated varint');
      const byte = buf[pos++] as number;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    throw malformed('varint longer than 10 bytes');
  };
  while (pos < buf.length) {
    const tag = readVarint();
    const number = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (number === 0) throw malformed('field number 0');
    switch (wireType) {
      case WIRE_VARINT:
        yield { number, wireType, value: readVarint() };
        break;
      case WIRE_LENGTH_DELIMITED: {
        const length = readVarint();
        if (pos + length > buf.length) throw malformed('truncated length-delimited field');
        yield { number, wireType, value: buf.subarray(pos, pos + length) };
        pos += length;
        break;
      }
      case WIRE_FIXED64:
      case WIRE_FIXED32:
        pos += wireType === WIRE_FIXED64 ? 8 : 4;
        if (pos > buf.length) throw malformed('truncated fixed-width field');
        break;
      default:
        // Groups (3, 4) do not occur in descriptor.proto; anything else is not protobuf.
        throw malformed(`unexpected wire type ${wireType} for field ${number}`);
    }
  }
}

function lengthDelimited(field: WireField, what: string): Buffer {
  if (typeof field.value === 'number') throw malformed(`${what} has wire type ${field.wireType}, expected ${WIRE_LENGTH_DELIMITED}`);
  return field.value;
}

function text(field: WireField, what: string): string {
  return lengthDelimited(field, what).toString('utf8');
}

function varint(field: WireField, what: string): number {
  if (typeof field.value !== 'number') throw malformed(`${what} has wire type ${field.wireType}, expected ${WIRE_VARINT}`);
  return field.value;
}
