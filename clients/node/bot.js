#!/usr/bin/env node
'use strict';
/**
 * A Nap Arena bot in Node.js: one nap.v1.Referee/Play stream, the .proto loaded at run time.
 *
 *   NAP_REFEREE=127.0.0.1:50051 NAP_TOKEN=secret node bot.js
 *   node bot.js --address 127.0.0.1:50051 --token secret [--name node] [--max-batch 64]
 *
 * Life cycle: send Hello; expect Welcome (a Refusal or UNAUTHENTICATED ends the process
 * with status 2); answer every Batch's requests in ONE Answers message; log Faults to
 * stderr; exit 0 when the referee ends the stream or on SIGTERM/SIGINT (after a Goodbye).
 * A broken stream (UNAVAILABLE) is reopened for up to 15 s before giving up (status 3).
 *
 * The .proto is found at $NAP_PROTO, ./nap.proto, or ../../proto/nap/v1/nap.proto (this
 * repository's layout). Nothing is generated ahead of time.
 */

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { decide } = require('./strategy');

const NAME = 'node';
const VERSION = '1.0';
const PROTOCOL_VERSION = 1;
// The decisions beyond bids and cards this bot answers (strategy.js declines each).
const DECISIONS = ['exchange', 'peep', 'widow'];
const RECONNECT_FOR_MS = 15000;
const GOODBYE_GRACE_MS = 2000;
const LOGGED_FAULTS = 20;

function log(line) {
  process.stderr.write(`${NAME}: ${line}\n`);
}

/** Command line over environment: --address/--token/--name/--max-batch, else NAP_REFEREE/NAP_TOKEN. */
function parseArgs(argv) {
  const options = {
    address: process.env.NAP_REFEREE || '',
    token: process.env.NAP_TOKEN || '',
    name: NAME,
    maxBatch: 64,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => (inline !== undefined ? inline : argv[(i += 1)]);
    if (flag === '--address') options.address = value();
    else if (flag === '--token') options.token = value();
    else if (flag === '--name') options.name = value();
    else if (flag === '--max-batch') options.maxBatch = Number(value());
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write('usage: node bot.js [--address HOST:PORT] [--token TOKEN] [--name NAME] [--max-batch N]\n');
      process.exit(0);
    } else usage(`unknown argument ${argv[i]}`);
  }
  if (!options.address) usage('the referee\'s address is needed: --address HOST:PORT or $NAP_REFEREE');
  if (!options.token) usage('a token is needed: --token TOKEN or $NAP_TOKEN');
  if (!Number.isInteger(options.maxBatch) || options.maxBatch < 1) usage('--max-batch must be at least 1');
  return options;
}

function usage(message) {
  log(message);
  process.exit(2);
}

function protoPath() {
  const candidates = [
    process.env.NAP_PROTO,
    path.join(__dirname, 'nap.proto'),
    path.join(__dirname, '..', '..', 'proto', 'nap', 'v1', 'nap.proto'),
  ].filter(Boolean);
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) {
    log(`cannot find nap.proto (looked at ${candidates.join(', ')}); set NAP_PROTO`);
    process.exit(1);
  }
  return found;
}

function loadReferee() {
  const definition = protoLoader.loadSync(protoPath(), {
    keepCase: true, // snake_case field names, as in the .proto
    longs: String, // request_id (uint64) as a string: echoed back unchanged
    enums: String, // "PHASE_BIDDING", "FAULT_KIND_LATE"
    defaults: true, // empty lists and strings present
    oneofs: true, // message.kind names the field that is set
  });
  return grpc.loadPackageDefinition(definition).nap.v1.Referee;
}

/** One Play stream; resolves with 'done', 'retry' or an exit status. */
function playOnce(client, options, state) {
  return new Promise((resolve) => {
    const call = client.Play();
    state.call = call;
    let welcomed = false;
    let settled = false;
    const finish = (result) => {
      if (!settled) {
        settled = true;
        state.call = null;
        resolve(result);
      }
    };

    call.on('data', (message) => {
      switch (message.kind) {
        case 'welcome':
          welcomed = true;
          state.progressed = true;
          break;
        case 'refusal':
          log(`the referee refused this bot (${message.refusal.reason}): ${message.refusal.message}`);
          finish(2);
          break;
        case 'batch': {
          const requests = message.batch.requests;
          if (!requests.length || state.stopping) break;
          const answers = requests.map((request) => {
            const action = decide(request);
            state.decisions += 1;
            return { request_id: request.request_id, action };
          });
          call.write({ answers: { answers } });
          break;
        }
        case 'fault': {
          const fault = message.fault;
          state.faults += 1;
          if (state.faults <= LOGGED_FAULTS) {
            log(`fault ${fault.kind} at table ${fault.table}, request ${fault.request_id}: ${fault.message}`);
          }
          break;
        }
        default: // table_closed, and kinds this bot does not know: nothing to do
      }
    });
    call.on('end', () => finish(state.stopping || welcomed ? 'done' : 'retry'));
    call.on('error', (err) => {
      if (state.stopping) return finish('done');
      if (err.code === grpc.status.UNAUTHENTICATED) {
        log(`the referee rejected the token (${err.details})`);
        return finish(2);
      }
      if ([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.CANCELLED].includes(err.code)) {
        if (welcomed) log(`stream to the referee broke (${err.details}); reconnecting`);
        return finish('retry');
      }
      log(`the stream to the referee failed (${grpc.status[err.code]}: ${err.details})`);
      return finish(1);
    });

    call.write({
      hello: {
        token: options.token,
        bot_name: options.name,
        bot_version: VERSION,
        protocol_version: PROTOCOL_VERSION,
        max_batch: options.maxBatch,
        events: false,
        decisions: DECISIONS,
      },
    });
  });
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const Referee = loadReferee();
  const client = new Referee(options.address, grpc.credentials.createInsecure());
  const state = { call: null, stopping: false, progressed: false, decisions: 0, faults: 0 };

  const stop = () => {
    if (state.stopping) return;
    state.stopping = true;
    const call = state.call;
    if (call) {
      try {
        call.write({ goodbye: { reason: 'shutting down' } });
        call.end();
      } catch (err) {
        // the stream is already gone
      }
      setTimeout(() => call.cancel(), GOODBYE_GRACE_MS).unref();
    }
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  let giveUpAt = Date.now() + RECONNECT_FOR_MS;
  let delay = 50;
  for (;;) {
    state.progressed = false;
    const result = await playOnce(client, options, state);
    if (result === 'done' || state.stopping) break;
    if (typeof result === 'number') {
      client.close();
      process.exit(result);
    }
    if (state.progressed) {
      giveUpAt = Date.now() + RECONNECT_FOR_MS;
      delay = 50;
    }
    if (Date.now() >= giveUpAt) {
      log(`referee at ${options.address} unreachable for ${RECONNECT_FOR_MS / 1000} s; giving up`);
      client.close();
      process.exit(3);
    }
    await new Promise((resume) => setTimeout(resume, delay * (0.5 + Math.random() / 2)));
    delay = Math.min(delay * 2, 1000);
  }
  client.close();
  if (state.faults) log(`${state.decisions} decisions, ${state.faults} faults`);
  process.exit(0);
}

main().catch((err) => {
  log(`failed: ${(err && err.stack) || err}`);
  process.exit(1);
});
