#!/usr/bin/env node
'use strict'
/*
 * The KafkaJS driver of the client driver protocol, version 1 (docs/driver-protocol.md): JSON lines on stdin, one
 * answer per request on stdout, KafkaJS's log and ours on stderr.
 *
 * What each operation calls, and what the driver derives because KafkaJS does not report it:
 *
 * send: one producer.send({topic, acks: -1, compression, messages}) per request. KafkaJS groups a send's messages by
 *   partition and writes one RecordBatch per partition into one Produce request (src/producer/sendMessages.js,
 *   src/protocol/requests/produce/v3/request.js partitionsEncoder), so one send() is one batch. Its result is
 *   KafkaJS's RecordMetadata, one per partition, not per record: {topicName, partition, errorCode, baseOffset,
 *   logAppendTime} (src/producer/responseSerializer.js). A KafkaJS application knows a record's offset as
 *   baseOffset + its index in the call (the batch's offset deltas are the indexes), and its timestamp as
 *   logAppendTime where that is not -1, else the timestamp it set itself; a record it gave no timestamp is stamped
 *   with Date.now() inside KafkaJS's encoder, which the application never sees, so the driver reports -1 ("no
 *   timestamp") for it. A rejected send rejects as a whole with one error (KafkaJS speaks Produce v7 at most, which
 *   has no record_errors): every record of the call gets that error, which is what the broker's answer says of each
 *   record, so `record-errors` is declared and the suite judges each record's failure against that answer. A codec
 *   is declared where KafkaJS's CompressionCodecs has one (the pinned install: none and gzip).
 * consume: KafkaJS's consumer has no manual assignment: a consumer with a fresh groupId subscribes to the topic,
 *   run() joins the group (the only member gets every partition) and consumer.seek() moves the partition to the
 *   requested offset; eachBatch collects the partition's messages until the one at until - 1. A broker without group
 *   coordination cannot serve this consumer, so `consume` and `seek-by-time` are declared only where the broker
 *   offers every API the consumer sends in a group (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 *   OffsetFetch) and answers FindCoordinator for a group with a coordinator (Apache Kafka, and the reference
 *   broker, whose group coordinator is conformance/reference/groups.py). A message's timestamp type is not in
 *   KafkaJS's typed message, but an application can read it as the driver does (declared `timestamp-type` with
 *   consume): the driver reads the batch attribute KafkaJS keeps on each v2 message (batchContext.timestampType)
 *   and bit 3 of a legacy v1 message's attributes; a v0 message has no timestamp (-1, NoTimestampType). Headers come as an
 *   object keyed by header key, so repeated keys are grouped and the original order of distinct keys is lost.
 * offsets_for_times: admin.fetchTopicOffsetsByTimestamp(topic, target). It answers offsets only (the ListOffsets
 *   timestamp is dropped: timestamp null), never refuses a negative target, and where the broker finds no record
 *   (offset -1) it answers the partition's high watermark instead (src/admin/index.js fetchTopicOffsetsByTimestamp):
 *   the driver reports what KafkaJS answers.
 * list_offsets: admin.fetchTopicOffsets(topic): `low` for earliest, `high` for latest, offsets only. KafkaJS has no
 *   max-timestamp spec (KIP-734): not declared.
 * seek_by_time: fetchTopicOffsetsByTimestamp, then the consumer above from the answered offset; an answer at or past
 *   `until` has no record to deliver (record null).
 * Each request is bounded by timeout_ms from its start (a `failed` answer of kind DriverTimeout past it); a consumer
 * that fails part-way answers `failed` with the records it delivered before.
 */

const fs = require('fs')
const net = require('net')
const path = require('path')
const readline = require('readline')

// Nothing but answers on stdout: anything that logs through console goes to stderr.
for (const name of ['log', 'info', 'debug', 'warn']) console[name] = (...args) => console.error(...args)

const PROTOCOL = 1
const LIBRARY = 'kafkajs'
const LANGUAGE = 'javascript'
const POLL_WAIT_MS = 100
const CLEANUP_MS = 5000 // leaving a consumer group, closing connections: after the request's own deadline

let kafkajs
try {
  kafkajs = require('kafkajs')
} catch (e) {
  process.stderr.write(`kafkajs driver: cannot load kafkajs (${e.message}); install the driver through kafka-conformance\n`)
  process.exit(3)
}
const { Kafka, logLevel, CompressionTypes, CompressionCodecs, Partitioners } = kafkajs

// Kafka's protocol names for the codes whose KafkaJS type keeps an older name (src/protocol/error.js).
const RENAMED_ERRORS = {
  [-1]: 'UNKNOWN_SERVER_ERROR',
  6: 'NOT_LEADER_OR_FOLLOWER',
  14: 'COORDINATOR_LOAD_IN_PROGRESS',
  15: 'COORDINATOR_NOT_AVAILABLE',
  16: 'NOT_COORDINATOR',
}
const CODECS = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP, snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD }
// The APIs KafkaJS's consumer sends in a group (ApiVersions keys): src/consumer/consumerGroup.js findGroupCoordinator,
// joinGroup, syncGroup, heartbeat and leaveGroup; OffsetFetch for the committed offsets of its assignment
// (src/consumer/offsetManager/index.js resolveOffsets); with autoCommit false it commits nothing (OffsetCommit).
const OFFSET_FETCH = 9
const FIND_COORDINATOR = 10
const JOIN_GROUP = 11
const HEARTBEAT = 12
const LEAVE_GROUP = 13
const SYNC_GROUP = 14
const GROUP_APIS = { OffsetFetch: OFFSET_FETCH, FindCoordinator: FIND_COORDINATOR, JoinGroup: JOIN_GROUP,
  Heartbeat: HEARTBEAT, LeaveGroup: LEAVE_GROUP, SyncGroup: SYNC_GROUP }
const API_VERSIONS = 18

// An answer's error: its protocol type, the library's kind, and for a consumer the records it delivered first.
class ProtocolError extends Error {
  constructor(type, message, kind = undefined, delivered = undefined) {
    super(message)
    this.type = type
    this.kind = kind
    this.delivered = delivered
  }
}

class DriverTimeout extends Error {
  constructor(message) {
    super(message)
    this.name = 'DriverTimeout'
  }
}

function log(message) {
  process.stderr.write(`${new Date().toISOString()} kafkajs driver: ${message}\n`)
}

// -- the library's version: the installed package's, or the checkout the install folder links to

function libraryVersion() {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, 'package.json'), 'utf8'))
    const wanted = (manifest.dependencies || {}).kafkajs || ''
    if (wanted.startsWith('file:')) return wanted.slice('file:'.length)
  } catch (e) {
    // run from the source folder (NODE_PATH): no install manifest beside it
  }
  return require('kafkajs/package.json').version
}

// -- JSON lines with 64-bit integers: a long run of digits is read as a string and every int64 is a BigInt

const LONG_NUMBER = /([:,[]\s*)(-?\d{16,})(?=\s*[,\]}])/g
const INT64_MARK = '__int64__:'

function parse(line) {
  // Topic names, base64 and op names hold no ':' or ',' followed by digits, so only bare numbers are quoted.
  return JSON.parse(line.replace(LONG_NUMBER, '$1"$2"'))
}

function encode(answer) {
  const text = JSON.stringify(answer, (key, value) => (typeof value === 'bigint' ? INT64_MARK + value : value))
  return text.replace(new RegExp(`"${INT64_MARK}(-?\\d+)"`, 'g'), '$1')
}

function write(answer) {
  process.stdout.write(encode(answer) + '\n')
}

function field(req, name, check) {
  const value = req[name]
  if (value === undefined || !check(value)) {
    throw new ProtocolError('bad-request', `${req.op}: missing or malformed field "${name}"`)
  }
  return value
}

const isInteger = v => (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && /^-?\d+$/.test(v))
const isString = v => typeof v === 'string' && v.length > 0
const int64 = (req, name) => BigInt(field(req, name, isInteger))
const bytesIn = v => (v === null ? null : Buffer.from(v, 'base64'))
const bytesOut = v => (v === null || v === undefined ? null : Buffer.from(v).toString('base64'))
// KafkaJS takes a timestamp or an offset as a number or a decimal string (src/utils/long.js fromValue).
const asLibraryLong = v => (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString())

// -- errors as values

function protocolErrorOf(e) {
  for (let x = e, depth = 0; x && depth < 16; x = x.cause, depth++) {
    if (x.name === 'KafkaJSProtocolError' || (typeof x.type === 'string' && typeof x.code === 'number')) return x
  }
  return null
}

function kindOf(e) {
  const kafkaError = protocolErrorOf(e)
  if (kafkaError) {
    if (kafkaError.type === 'KAFKAJS_UNKNOWN_ERROR_CODE') {
      const code = /Unknown error code (-?\d+)/.exec(kafkaError.message)
      return code ? `CODE_${code[1]}` : kafkaError.type
    }
    return RENAMED_ERRORS[kafkaError.code] || kafkaError.type
  }
  return (e && e.name) || 'Error'
}

// The error's own text (its type is the answer's `kind`), then the causes KafkaJS wrapped it around.
function messageOf(e) {
  const first = e && e.message !== undefined ? String(e.message) : String(e)
  const causes = []
  for (let x = e && e.cause, depth = 0; x && depth < 16; x = x.cause, depth++) {
    const text = `${x.name || 'Error'}: ${x.message}`
    if (x.message !== first && !causes.includes(text)) causes.push(text)
  }
  return causes.length ? `${first} (caused by ${causes.join(', caused by ')})` : first
}

function failed(e, extra = {}) {
  return { type: 'failed', kind: kindOf(e), message: messageOf(e), ...extra }
}

// -- what the broker offers, asked once at hello on a plain socket (KafkaJS keeps its ApiVersions private):
// ApiVersions v0, and FindCoordinator v0/v1 for a group

// One request on a fresh connection: its answer's body (after size and correlation id).
function ask(broker, apiKey, version, body, timeoutMs) {
  const [host, portText] = [broker.slice(0, broker.lastIndexOf(':')), broker.slice(broker.lastIndexOf(':') + 1)]
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: host.replace(/^\[|\]$/g, ''), port: Number(portText) })
    let received = Buffer.alloc(0)
    const fail = e => {
      socket.destroy()
      reject(e)
    }
    socket.setTimeout(timeoutMs, () => fail(new DriverTimeout(`no answer to api key ${apiKey} from ${broker} in ${timeoutMs} ms`)))
    socket.on('error', fail)
    socket.on('connect', () => {
      const clientId = Buffer.from('kts-kafkajs-probe')
      const header = Buffer.alloc(10 + clientId.length)
      header.writeInt16BE(apiKey, 0)
      header.writeInt16BE(version, 2)
      header.writeInt32BE(1, 4)
      header.writeInt16BE(clientId.length, 8)
      clientId.copy(header, 10)
      const size = Buffer.alloc(4)
      size.writeInt32BE(header.length + body.length)
      socket.write(Buffer.concat([size, header, body]))
    })
    socket.on('data', chunk => {
      received = Buffer.concat([received, chunk])
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return
      socket.end()
      resolve(received.subarray(8, 4 + received.readInt32BE(0)))
    })
  })
}

// {api key: [min, max]} from ApiVersions v0.
async function apiVersionsOf(broker, timeoutMs) {
  const answer = await ask(broker, API_VERSIONS, 0, Buffer.alloc(0), timeoutMs)
  const error = answer.readInt16BE(0)
  if (error !== 0) throw new Error(`ApiVersions answered error ${error}`)
  const offered = new Map()
  for (let i = 0, count = answer.readInt32BE(2); i < count; i++) {
    const at = 6 + 6 * i
    offered.set(answer.readInt16BE(at), [answer.readInt16BE(at + 2), answer.readInt16BE(at + 4)])
  }
  return offered
}

// The error FindCoordinator answers for a group (0: the broker names a coordinator), at v1 where offered, else v0.
async function groupCoordinatorError(broker, range, timeoutMs) {
  const version = range[0] <= 1 && range[1] >= 1 ? 1 : 0
  const key = Buffer.from('kts-kafkajs-probe')
  const body = Buffer.alloc(2 + key.length + (version === 1 ? 1 : 0))
  body.writeInt16BE(key.length, 0)
  key.copy(body, 2) // v1 adds key_type 0 (group), the zero byte already there
  const answer = await ask(broker, FIND_COORDINATOR, version, body, timeoutMs)
  return answer.readInt16BE(version === 1 ? 4 : 0) // v1 starts with throttle_time_ms
}

// -- the driver

class Driver {
  constructor() {
    this.kafka = null
    this.timeoutMs = 10000
    this.deadline = Date.now() + this.timeoutMs
    this.capabilities = []
    this.codecs = []
    this.producer = null
    this.admin = null
    this.consumers = new Set()
    this.consumerCount = 0
  }

  // Every library call of a request is bounded by the request's deadline (timeout_ms from its start), so that a
  // request is answered within timeout_ms plus the clean-up; the suite waits twice that.
  bounded(promise, what, deadline = this.deadline) {
    let timer
    const limit = new Promise((resolve, reject) => {
      timer = setTimeout(
        () => reject(new DriverTimeout(`${what} did not finish within timeout_ms (${this.timeoutMs} ms)`)),
        Math.max(0, deadline - Date.now())
      )
    })
    return Promise.race([promise, limit]).finally(() => clearTimeout(timer))
  }

  cleanupDeadline() {
    return Date.now() + Math.min(this.timeoutMs, CLEANUP_MS)
  }

  async hello(req) {
    const protocol = field(req, 'protocol', Number.isInteger)
    if (protocol !== PROTOCOL) {
      throw new ProtocolError('bad-request', `this driver speaks protocol ${PROTOCOL}, not ${protocol}`)
    }
    const role = field(req, 'role', isString)
    if (role !== 'client') {
      throw new ProtocolError('unsupported', `KafkaJS plays the client role only (its record layer is not public), not ${role}`)
    }
    this.timeoutMs = Number(field(req, 'timeout_ms', v => Number.isInteger(v) && v > 0))
    this.deadline = Date.now() + this.timeoutMs
    const brokers = field(req, 'bootstrap', isString).split(',').map(b => b.trim()).filter(Boolean)
    this.kafka = new Kafka({
      clientId: 'kts-kafkajs',
      brokers,
      requestTimeout: this.timeoutMs,
      connectionTimeout: Math.min(this.timeoutMs, 3000),
      retry: { retries: 5, maxRetryTime: this.timeoutMs },
      logLevel: logLevel.INFO,
      logCreator: () => ({ namespace, label, log: entry }) => {
        const { message, timestamp, logger, ...rest } = entry
        const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : ''
        process.stderr.write(`${timestamp} kafkajs ${label} [${namespace}] ${message}${extra}\n`)
      },
    })
    let groups
    try {
      groups = await this.groupsOffered(brokers[0])
    } catch (e) {
      throw new ProtocolError('failed', `cannot read the APIs of ${brokers[0]}: ${e.message}`, kindOf(e))
    }
    log(groups === null ? 'the broker coordinates consumer groups' : `no consumer groups: ${groups}`)
    this.capabilities = ['send', 'record-errors', 'offsets-for-times', 'earliest', 'latest']
    if (groups === null) this.capabilities.push('consume', 'seek-by-time', 'timestamp-type')
    this.codecs = Object.keys(CODECS).filter(name => {
      if (name === 'none') return true
      try {
        return Boolean(CompressionCodecs[CODECS[name]]())
      } catch (e) {
        return false // KafkaJS ships gzip only; the others need a codec package registered in CompressionCodecs
      }
    })
    return {
      protocol: PROTOCOL,
      library: LIBRARY,
      version: libraryVersion(),
      language: LANGUAGE,
      capabilities: this.capabilities,
      codecs: this.codecs,
    }
  }

  // null when the broker can serve KafkaJS's consumer: it offers every API the consumer sends in a group and
  // FindCoordinator names a coordinator for a group; otherwise why not.
  async groupsOffered(broker) {
    const offered = await apiVersionsOf(broker, this.timeoutMs)
    const missing = Object.entries(GROUP_APIS).filter(([, key]) => !offered.has(key)).map(([name]) => name)
    if (missing.length) return `the broker does not offer ${missing.join(', ')}`
    // Retriable while the coordinator starts: Kafka answers COORDINATOR_NOT_AVAILABLE (15) until its first
    // FindCoordinator has created __consumer_offsets, and COORDINATOR_LOAD_IN_PROGRESS (14) while it loads.
    const deadline = Date.now() + this.timeoutMs
    for (;;) {
      const error = await groupCoordinatorError(broker, offered.get(FIND_COORDINATOR), this.timeoutMs)
      if (error === 0) return null
      if (![14, 15].includes(error) || Date.now() + POLL_WAIT_MS * 2 > deadline) {
        return `FindCoordinator answers error ${error} for a group`
      }
      await new Promise(resolve => setTimeout(resolve, POLL_WAIT_MS * 2))
    }
  }

  requireHello() {
    if (!this.kafka) throw new ProtocolError('bad-request', 'hello first')
  }

  async producerOf() {
    if (!this.producer) {
      const producer = this.kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        allowAutoTopicCreation: false,
        idempotent: false,
      })
      this.producer = this.bounded(producer.connect(), 'producer.connect()').then(() => producer)
      this.producer.catch(() => {
        this.producer = null
      })
    }
    return this.producer
  }

  async adminOf() {
    if (!this.admin) {
      const admin = this.kafka.admin()
      this.admin = this.bounded(admin.connect(), 'admin.connect()').then(() => admin)
      this.admin.catch(() => {
        this.admin = null
      })
    }
    return this.admin
  }

  async send(req) {
    this.requireHello()
    const topic = field(req, 'topic', isString)
    const partition = Number(field(req, 'partition', Number.isInteger))
    const codec = field(req, 'codec', v => v in CODECS)
    const records = field(req, 'records', v => Array.isArray(v) && v.length > 0)
    if (!this.codecs.includes(codec)) {
      throw new ProtocolError('unsupported', `KafkaJS has no ${codec} codec registered (CompressionCodecs)`)
    }
    const stamps = records.map(r => (r.timestamp === null || r.timestamp === undefined ? null : BigInt(r.timestamp)))
    const messages = records.map((r, i) => {
      const message = { key: bytesIn(r.key), value: bytesIn(r.value), partition }
      // KafkaJS types a message's timestamp as a string; none lets its encoder stamp Date.now().
      if (stamps[i] !== null) message.timestamp = stamps[i].toString()
      return message
    })
    const producer = await this.producerOf()
    let metadata
    try {
      metadata = await this.bounded(
        producer.send({ topic, acks: -1, timeout: this.timeoutMs, compression: CODECS[codec], messages }),
        'producer.send()'
      )
    } catch (e) {
      if (e instanceof DriverTimeout) throw e
      const error = { kind: kindOf(e), message: messageOf(e) }
      return { outcomes: records.map(() => ({ error })) }
    }
    const mine = metadata.find(m => m.topicName === topic && Number(m.partition) === partition)
    if (!mine) {
      throw new ProtocolError('failed', `KafkaJS answered no RecordMetadata for ${topic}-${partition}: ${JSON.stringify(metadata)}`, 'NoRecordMetadata')
    }
    const base = BigInt(mine.baseOffset)
    const logAppendTime = BigInt(mine.logAppendTime)
    return {
      outcomes: stamps.map((stamp, i) => ({
        offset: base + BigInt(i),
        timestamp: logAppendTime !== -1n ? logAppendTime : stamp === null ? -1n : stamp,
      })),
    }
  }

  consumerRecord(message) {
    let timestamp = message.timestamp === undefined || message.timestamp === null ? -1n : BigInt(message.timestamp)
    let type
    if (message.batchContext) {
      type = message.batchContext.timestampType === 1 ? 'LogAppendTime' : 'CreateTime'
    } else if (message.magicByte === 1) {
      type = message.attributes & 0x08 ? 'LogAppendTime' : 'CreateTime'
    } else {
      type = 'NoTimestampType'
      timestamp = -1n
    }
    const headers = []
    for (const [key, value] of Object.entries(message.headers || {})) {
      for (const one of Array.isArray(value) ? value : [value]) headers.push({ key, value: bytesOut(one) })
    }
    return {
      offset: BigInt(message.offset),
      timestamp,
      timestamp_type: type,
      key: bytesOut(message.key),
      value: bytesOut(message.value),
      headers,
    }
  }

  // The records KafkaJS's consumer delivers for topic-partition after a seek to `offset`, up to the one at
  // until - 1 (or the first one, with `first`).
  async consumeFrom(topic, partition, offset, until, { first = false } = {}) {
    const consumer = this.kafka.consumer({
      groupId: `kts-kafkajs-${process.pid}-${++this.consumerCount}-${Date.now()}`,
      maxWaitTimeInMs: POLL_WAIT_MS,
      allowAutoTopicCreation: false,
      retry: { retries: 5, maxRetryTime: this.timeoutMs },
    })
    this.consumers.add(consumer)
    const delivered = []
    let settle
    const done = new Promise((resolve, reject) => {
      settle = { resolve, reject }
    })
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) settle.reject(payload.error)
    })
    // run() can resolve before the group is joined (under load, or after a restart), and seek() before that throws
    // "Consumer group was not initialized": the seek is made on the first join, or right after run() if the group
    // is there already; never twice, so nothing is delivered twice by the driver's own doing.
    let sought = false
    const seekOnce = () => {
      if (sought) return
      try {
        consumer.seek({ topic, partition, offset: offset.toString() })
        sought = true
      } catch (e) {
        log(`seek before the group was joined (${e.message}): seeking on the join`)
      }
    }
    consumer.on(consumer.events.GROUP_JOIN, seekOnce)
    try {
      await this.bounded(consumer.connect(), 'consumer.connect()')
      await consumer.subscribe({ topic, fromBeginning: false })
      await this.bounded(
        consumer.run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            if (batch.topic !== topic || batch.partition !== partition) return
            for (const message of batch.messages) {
              delivered.push(this.consumerRecord(message))
              if (first || delivered[delivered.length - 1].offset >= until - 1n) {
                settle.resolve()
                break
              }
            }
          },
        }),
        'consumer.run() (joining the group)'
      )
      seekOnce()
      await this.bounded(done, `consuming ${topic}-${partition} from ${offset} to ${until}`)
      return delivered.filter(r => r.offset < until)
    } catch (e) {
      throw new ProtocolError('failed', messageOf(e), kindOf(e), delivered.filter(r => r.offset < until))
    } finally {
      this.consumers.delete(consumer)
      await this.bounded(consumer.disconnect(), 'consumer.disconnect()', this.cleanupDeadline())
        .catch(e => log(`disconnect: ${e.message}`))
    }
  }

  requireGroups(op) {
    if (!this.capabilities.includes('consume')) {
      throw new ProtocolError('unsupported', `${op}: KafkaJS's consumer needs a consumer group (it has no manual assignment) and this broker does not coordinate groups`)
    }
  }

  async consume(req) {
    this.requireHello()
    this.requireGroups('consume')
    const topic = field(req, 'topic', isString)
    const partition = Number(field(req, 'partition', Number.isInteger))
    const records = await this.consumeFrom(topic, partition, int64(req, 'offset'), int64(req, 'until'))
    return { records }
  }

  async lookup(topic, partition, target) {
    const admin = await this.adminOf()
    const found = await this.bounded(admin.fetchTopicOffsetsByTimestamp(topic, asLibraryLong(target)), 'admin.fetchTopicOffsetsByTimestamp()')
    const mine = found.find(p => Number(p.partition) === partition)
    if (!mine) throw new ProtocolError('failed', `KafkaJS answered no offset for ${topic}-${partition}`, 'NoOffset')
    // Offsets only: fetchTopicOffsetsByTimestamp drops the ListOffsets timestamp.
    return { offset: BigInt(mine.offset), timestamp: null }
  }

  async offsets_for_times(req) {
    this.requireHello()
    const topic = field(req, 'topic', isString)
    const partition = Number(field(req, 'partition', Number.isInteger))
    const target = int64(req, 'target')
    try {
      return { answer: await this.lookup(topic, partition, target) }
    } catch (e) {
      if (e instanceof ProtocolError) throw e
      throw new ProtocolError('failed', messageOf(e), kindOf(e))
    }
  }

  async list_offsets(req) {
    this.requireHello()
    const topic = field(req, 'topic', isString)
    const partition = Number(field(req, 'partition', Number.isInteger))
    const spec = field(req, 'spec', v => ['earliest', 'latest', 'max-timestamp'].includes(v))
    if (spec === 'max-timestamp') {
      throw new ProtocolError('unsupported', 'KafkaJS offers no max-timestamp lookup (KIP-734)')
    }
    try {
      const admin = await this.adminOf()
      const offsets = await this.bounded(admin.fetchTopicOffsets(topic), 'admin.fetchTopicOffsets()')
      const mine = offsets.find(p => Number(p.partition) === partition)
      if (!mine) throw new ProtocolError('failed', `KafkaJS answered no offsets for ${topic}-${partition}`, 'NoOffset')
      return { offset: BigInt(spec === 'earliest' ? mine.low : mine.high), timestamp: null }
    } catch (e) {
      if (e instanceof ProtocolError) throw e
      throw new ProtocolError('failed', messageOf(e), kindOf(e))
    }
  }

  async seek_by_time(req) {
    this.requireHello()
    this.requireGroups('seek_by_time')
    const topic = field(req, 'topic', isString)
    const partition = Number(field(req, 'partition', Number.isInteger))
    const target = int64(req, 'target')
    const until = int64(req, 'until')
    let answer
    try {
      answer = await this.lookup(topic, partition, target)
    } catch (e) {
      if (e instanceof ProtocolError) throw e
      throw new ProtocolError('failed', messageOf(e), kindOf(e))
    }
    if (answer.offset >= until) return { answer, record: null }
    const records = await this.consumeFrom(topic, partition, answer.offset, until, { first: true })
    return { answer, record: records.length ? records[0] : null }
  }

  async shutdown() {
    const all = [...this.consumers].map(c => c.disconnect())
    for (const client of [this.producer, this.admin]) {
      if (client) all.push(client.then(c => c.disconnect()))
    }
    this.producer = this.admin = null
    this.consumers.clear()
    const results = await this.bounded(Promise.allSettled(all), 'closing', this.cleanupDeadline()).catch(e => [e])
    for (const r of results) if (r && r.status === 'rejected') log(`close: ${r.reason && r.reason.message}`)
  }

  async close() {
    await this.shutdown()
    return {}
  }
}

// -- the loop: one request at a time, in order

const OPS = ['hello', 'send', 'consume', 'offsets_for_times', 'list_offsets', 'seek_by_time', 'close']

async function answer(driver, line) {
  let req
  try {
    req = parse(line)
  } catch (e) {
    return { id: 0, error: { type: 'bad-request', message: `not a JSON line: ${e.message}` } }
  }
  if (req === null || typeof req !== 'object' || Array.isArray(req) || !Number.isInteger(req.id) || req.id < 0) {
    return { id: 0, error: { type: 'bad-request', message: 'a request is a JSON object with an integer "id"' } }
  }
  if (!OPS.includes(req.op)) {
    return { id: req.id, error: { type: 'bad-request', message: `unknown op ${JSON.stringify(req.op)}` } }
  }
  driver.deadline = Date.now() + driver.timeoutMs
  try {
    return { id: req.id, ok: await driver[req.op](req) }
  } catch (e) {
    if (e instanceof ProtocolError) {
      const error = { type: e.type, message: e.message }
      if (e.kind) error.kind = e.kind
      if (e.delivered) error.delivered = e.delivered
      return { id: req.id, error }
    }
    log(`${req.op} failed: ${e && e.stack}`)
    return { id: req.id, error: failed(e) }
  }
}

function main() {
  const driver = new Driver()
  const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
  let queue = Promise.resolve()
  let closing = false
  const exit = () => {
    // KafkaJS may keep timers and sockets alive after disconnect: exit once the answers are written.
    process.stdout.write('', () => process.exit(0))
  }
  input.on('line', line => {
    if (closing || !line.trim()) return
    queue = queue.then(async () => {
      const reply = await answer(driver, line)
      write(reply)
      if (reply.ok && parseOp(line) === 'close') {
        closing = true
        input.close()
      }
    })
  })
  input.on('close', () => {
    queue = queue.then(async () => {
      if (!closing) await driver.shutdown()
      exit()
    })
  })
}

function parseOp(line) {
  try {
    return parse(line).op
  } catch (e) {
    return null
  }
}

process.on('unhandledRejection', reason => log(`unhandled rejection: ${reason && reason.stack ? reason.stack : reason}`))
process.on('uncaughtException', e => log(`uncaught exception: ${e && e.stack}`))

main()
