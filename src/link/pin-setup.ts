// The bridge's pin table (CC_LINK_PIN), its pins file (CC_LINK_PINS_FILE) and their metrics, made
// once at start: a bad pins file throws PinsFileError here, before anything listens.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { plural } from '../plural.js';
import type { PinsWriter } from './pins-file.js';
import { KeyPins } from './pins.js';

export interface PinSetup {
  pins: KeyPins;
  /** The pins file's writer; null without CC_LINK_PINS_FILE. */
  writer: PinsWriter | null;
  /**
   * Reads the pins file again into the table (no-op without one): after this bridge took the link
   * port over from another (--stdio, CC_LINK_RETRY_MS) that shared the file, its pins are the ones
   * that count. A file that cannot be read then is logged and the table kept.
   */
  reread(): void;
}

/**
 * The pin table (loaded from its file, saved to it on each change); null with CC_LINK_PIN=off. The
 * file's module is loaded only with CC_LINK_PINS_FILE (a bare start does without it).
 */
export async function setupPins(config: Config, log: Logger, metrics: Metrics): Promise<PinSetup | null> {
  if (!config.linkPin) return null;
  const pins = new KeyPins(config.linkMaxPins, { strict: config.linkPinStrict, enrollMs: config.linkEnrollMs, confirmMs: config.linkPinConfirmMs });
  let writer: PinsWriter | null = null;
  let reread = () => {};
  if (config.linkPinsFile !== null) {
    const path = config.linkPinsFile;
    const { PinsWriter, readPinsFile, removeStaleTemps, STALE_TEMP_MS } = await import('./pins-file.js');
    reread = () => {
      try {
        const again = readPinsFile(path, config.linkMaxPins);
        pins.replace(again.pins, again.distrusted, again.unconfirmed, again.labels);
        // the other bridge's openings count too (strict); this bridge's own stay
        pins.loadOpenings(again.openings);
        log.info(`link port taken over: ${pins.size} pin${pins.size === 1 ? '' : 's'} read again from ${path}`);
      } catch (err) {
        log.error(`link port taken over, but ${(err as Error).message}; keeping the ${plural(pins.size, 'pin')} this bridge holds`);
      }
    };
    const loaded = readPinsFile(path, config.linkMaxPins);
    pins.load(loaded.pins);
    // not confirmed yet: the time their links were up starts again from nothing
    pins.loadUnconfirmed(loaded.unconfirmed);
    // held while their computers are away, as before the restart
    if (loaded.labels.size > 0) {
      const kept = pins.loadLabels(loaded.labels);
      const left = loaded.labels.size - kept;
      log.info(`${plural(kept, 'label')} of pinned computers kept from ${path}${left > 0 ? ` (${left} for ids not pinned: left out)` : ''}`);
    }
    if (loaded.distrusted.size > 0) {
      const kept = pins.loadDistrusted(loaded.distrusted);
      const left = loaded.distrusted.size - kept;
      log.info(`${plural(kept, 'key')} distrusted by a pin reset kept from ${path}${left > 0 ? ` (${left} for ids pinned since: left out)` : ''}`);
    }
    if (loaded.openings.size > 0) {
      // strict's openings (cc-mcp pin-reset) the file kept across the restart, until their end
      const kept = pins.loadOpenings(loaded.openings);
      const left = loaded.openings.size - kept;
      log.info(
        pins.strict
          ? `${plural(kept, 'enrollment opening')} kept from ${path}${left > 0 ? ` (${left} ended, pinned since or past CC_LINK_MAX_PINS: left out)` : ''}`
          : `${plural(loaded.openings.size, 'enrollment opening')} in ${path} left out: CC_LINK_PIN is not strict`,
      );
    }
    // a crash during a write left its temporary file; one of another bridge's writes in progress is young
    const stale = await removeStaleTemps(path);
    if (stale.removed.length > 0) log.info(`removed ${plural(stale.removed.length, 'temporary file')} a write of ${path} left behind (not modified for ${STALE_TEMP_MS / 60_000} minutes: a crash during the write): ${stale.removed.join(' ')}`);
    if (stale.failed.length > 0) log.warn(`cannot remove ${plural(stale.failed.length, 'temporary file')} a write of ${path} left behind: ${stale.failed.join(' ')}`);
    if (loaded.loose) log.warn(`the pins file ${path} may be read or written by others than its owner; the bridge writes it 0600 at the next change`);
    const unconfirmed = pins.unconfirmedCount > 0 ? ` (${pins.unconfirmedCount} not confirmed yet: CC_LINK_PIN_CONFIRM_MS)` : '';
    log.info(loaded.existed ? `${loaded.pins.size} pin${loaded.pins.size === 1 ? '' : 's'} read from ${path}${unconfirmed}` : `no pins file at ${path} yet: it is written at the first pin`);
    const w = new PinsWriter(path, () => pins.entries(), (line) => log.error(line), () => pins.openings(), () => pins.distrusted(), () => pins.unconfirmedIds(), () => pins.labelled());
    w.labelWriteMs = config.linkPinLabelWriteMs;
    w.pinWriteMs = config.linkPinWriteMs;
    pins.onChange = () => w.changed();
    pins.onPin = () => w.pinned();
    pins.onLabelChange = () => w.labelChanged();
    writer = w;
    metrics.addGauge({ name: 'cc_link_pins_file_writes_total', type: 'counter', help: 'Writes of CC_LINK_PINS_FILE done (pins made during a write are written together by the next).', read: () => w.writes });
    metrics.addGauge({ name: 'cc_link_pins_file_errors_total', type: 'counter', help: 'Writes of CC_LINK_PINS_FILE that failed (the pins stay in memory; the next change tries again).', read: () => w.failures });
  }
  if (pins.strict) {
    log.info(`CC_LINK_PIN=strict: only the ${pins.size} pinned computer id${pins.size === 1 ? ' links' : 's link'}; cc-mcp pin-reset <id> lets another in for ${config.linkEnrollMs / 1000} s`);
    metrics.addGauge({ name: 'cc_link_pins_open', help: 'Computer ids let in by the operator (CC_LINK_PIN=strict) that no computer has linked as yet.', read: () => pins.opened });
  }
  metrics.addGauge({ name: 'cc_link_pins', help: 'Computer ids pinned to the key they first linked with (CC_LINK_PIN).', read: () => pins.size });
  metrics.addGauge({ name: 'cc_link_pins_distrusted', help: 'Computer ids whose pin the operator reset: the key it had cannot pin the id again until another key has (cc-mcp pin-reset <id> --allow-old-key lifts it).', read: () => pins.distrustedCount });
  if (!pins.strict) {
    metrics.addGauge({ name: 'cc_link_pins_unconfirmed', help: 'Pins whose links have not stayed up CC_LINK_PIN_CONFIRM_MS in all yet: a full CC_LINK_MAX_PINS table evicts them first (when not linked).', read: () => pins.unconfirmedCount });
    metrics.addGauge({ name: 'cc_link_pins_evicted_total', type: 'counter', help: 'Unconfirmed pins evicted for a new computer id\'s pin because CC_LINK_MAX_PINS ids were pinned.', read: () => pins.evicted });
  }
  metrics.addGauge({ name: 'cc_link_pins_full_total', type: 'counter', help: 'Keyed hellos for a new computer id that linked unpinned because CC_LINK_MAX_PINS ids were pinned and none could be evicted.', read: () => pins.full });
  return { pins, writer, reread };
}
