;; The pre-token count of o200k-chunks.js (`chunkCountFrom`), compiled: the
;; same chunks as `nextChunkEnd`, found in a window of the text. Where
;; `nextChunkEnd` would give up (a character for the regex), or a character
;; beyond ASCII has no class yet, or deciding a chunk needs a character past
;; the window, the count stops and the JavaScript finds that one chunk.
;; `nextChunkEnd` is written out in one function, its lookups too: V8 does
;; not inline WebAssembly calls, and a call per character cost more than
;; the JavaScript.
;;
;; Memory (three 64 KiB pages): 0..127 the class bits of each ASCII
;; character (`CLASS`: 1 lower, 2 upper, 4 digit, 8 space, 16 line break,
;; 32 symbol); 65536.. one signed byte per UTF-16 code unit, the classes
;; beyond ASCII (`WIDE`: bits, -1 for the regex, 127 not known yet);
;; 131072.. the window, UTF-16, up to 32768 characters; 196608.. the
;; chunks of several tokens a count with `$lookup` found (start and end, two
;; i32 each, up to 32768 of them); 458752.. the tokens found recently
;; (16384 slots of hash, place in the token text and length, 16 bytes
;; each); from 720896 on, once `ranks` has placed them (the memory grown for
;; it), the rank index and the token text of o200k_base.js.
;;
;; With `$lookup`, each chunk found is looked up in the rank index (the hash
;; and probe of its `isToken`, written out here too): a token of its own
;; counts, any other chunk is listed for the JavaScript's BPE. As there, a
;; token found is kept in the slot of its hash among the recent ones, which
;; stay in the processor's cache where the rank index (megabytes) does not.
;; Rebuild: `node scripts/build-wasm.js` (writes o200k-chunks-wasm.js).
(module
  (memory (export "memory") 11)
  ;; where the last count stopped
  (global $stop (mut i32) (i32.const 0))
  ;; chunks of several tokens the last count listed
  (global $others (mut i32) (i32.const 0))
  ;; the rank index (see `ranks`)
  (global $offsetsAt (mut i32) (i32.const 0))
  (global $tableAt (mut i32) (i32.const 0))
  (global $mask (mut i32) (i32.const 0))
  (global $blobAt (mut i32) (i32.const 0))

  ;; Where the rank index's offsets (one i32 per rank, and one past the
  ;; last) and hash table (ranks + 1, 0 for an empty slot) start, its mask,
  ;; and where the token text (UTF-16) starts.
  (func (export "ranks") (param $offsetsAt i32) (param $tableAt i32) (param $mask i32) (param $blobAt i32)
    (global.set $offsetsAt (local.get $offsetsAt))
    (global.set $tableAt (local.get $tableAt))
    (global.set $mask (local.get $mask))
    (global.set $blobAt (local.get $blobAt)))

  ;; Counts chunks of the window (its $len characters, the text's last when
  ;; $atEnd) from $start, at most $enough; `stop` then tells where it stopped:
  ;; the window's end, or the start of a chunk left to the JavaScript.
  (func (export "count") (param $start i32) (param $len i32) (param $atEnd i32) (param $enough i32) (param $lookup i32) (result i32)
    (local $p i32) (local $n i32) (local $e i32) (local $c i32) (local $k i32) (local $first i32)
    (local $q i32) (local $i i32) (local $x i32) (local $a i32) (local $lastBreak i32)
    (local $h i32) (local $rank i32) (local $at i32) (local $length i32) (local $slot i32)
    (global.set $others (i32.const 0))
    (local.set $p (local.get $start))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $len)))
        (br_if $done (i32.ge_u (local.get $n) (local.get $enough)))
        (block $giveUp
          (block $found
            ;; the chunk at $p ends at $e
            (if (i32.ge_u (local.get $p) (local.get $len))
          (then (local.set $first (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $p) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $first (i32.load8_u (local.get $c))))
              (else
                (local.set $first (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $first) (i32.const 127)) (then (local.set $first (i32.const -1))))))))
            (if (i32.lt_s (local.get $first) (i32.const 0)) (then (br $giveUp)))
            ;; 1 and 2: a letter run, after at most one character that is not a line break, letter or digit
            (local.set $q (i32.const -1))
            (if (i32.and (local.get $first) (i32.const 3))
              (then (local.set $q (local.get $p)))
              (else
                (if (i32.eqz (i32.and (local.get $first) (i32.const 20)))
                  (then
                    (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $p) (i32.const 1)) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
                    (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
                    (if (i32.and (local.get $k) (i32.const 3))
                      (then (local.set $q (i32.add (local.get $p) (i32.const 1)))))))))
            (if (i32.ge_s (local.get $q) (i32.const 0))
              (then
                (local.set $i (local.get $q))
        (block $upperEnd
          (loop $upper
            (if (i32.ge_u (local.get $i) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $i) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
            (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
            (br_if $upperEnd (i32.eqz (i32.and (local.get $k) (i32.const 2))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $upper)))
                (local.set $i (local.get $i))
        (block $lowerEnd
          (loop $lower
            (if (i32.ge_u (local.get $i) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $i) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
            (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
            (br_if $lowerEnd (i32.eqz (i32.and (local.get $k) (i32.const 1))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $lower)))
                ;; the optional contraction: 's 'd 'm 't 'll 've 're, any case
                (local.set $e (local.get $i))
                (if (i32.ge_u (local.get $i) (local.get $len))
          (then (local.set $x (select (i32.const 0) (i32.const -2) (local.get $atEnd))))
          (else (local.set $x (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $i) (i32.const 1)))))))
                (if (i32.eq (local.get $x) (i32.const -2)) (then (br $giveUp)))
                (br_if $found (i32.ne (local.get $x) (i32.const 39)))
                (if (i32.ge_u (i32.add (local.get $i) (i32.const 1)) (local.get $len))
          (then (local.set $a (select (i32.const 0) (i32.const -2) (local.get $atEnd))))
          (else (local.set $a (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $i) (i32.const 1)) (i32.const 1)))))))
                (if (i32.eq (local.get $a) (i32.const -2)) (then (br $giveUp)))
                (local.set $a (i32.or (local.get $a) (i32.const 32)))
                (if (i32.or
                      (i32.or (i32.eq (local.get $a) (i32.const 115)) (i32.eq (local.get $a) (i32.const 100)))
                      (i32.or (i32.eq (local.get $a) (i32.const 109)) (i32.eq (local.get $a) (i32.const 116))))
                  (then
                    (local.set $e (i32.add (local.get $i) (i32.const 2)))
                    (br $found)))
                (if (i32.ge_u (i32.add (local.get $i) (i32.const 2)) (local.get $len))
          (then (local.set $x (select (i32.const 0) (i32.const -2) (local.get $atEnd))))
          (else (local.set $x (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $i) (i32.const 2)) (i32.const 1)))))))
                (if (i32.eq (local.get $x) (i32.const -2)) (then (br $giveUp)))
                (local.set $x (i32.or (local.get $x) (i32.const 32)))
                (if (i32.or
                      (i32.and (i32.eq (local.get $a) (i32.const 108)) (i32.eq (local.get $x) (i32.const 108)))
                      (i32.or
                        (i32.and (i32.eq (local.get $a) (i32.const 118)) (i32.eq (local.get $x) (i32.const 101)))
                        (i32.and (i32.eq (local.get $a) (i32.const 114)) (i32.eq (local.get $x) (i32.const 101)))))
                  (then (local.set $e (i32.add (local.get $i) (i32.const 3)))))
                (br $found)))
            ;; 3: up to three digits
            (if (i32.and (local.get $first) (i32.const 4))
              (then
                (local.set $e (i32.add (local.get $p) (i32.const 1)))
                (block $digitsEnd
                  (loop $digits
                    (br_if $digitsEnd (i32.ge_s (local.get $e) (i32.add (local.get $p) (i32.const 3))))
                    (if (i32.ge_u (local.get $e) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $e) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
                    (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
                    (br_if $digitsEnd (i32.eqz (i32.and (local.get $k) (i32.const 4))))
                    (local.set $e (i32.add (local.get $e) (i32.const 1)))
                    (br $digits)))
                (br $found)))
            ;; 4: symbols, after at most one space, then line breaks and slashes
            (local.set $q (i32.const -1))
            (if (i32.and (local.get $first) (i32.const 32))
              (then (local.set $q (local.get $p)))
              (else
                (if (i32.eq (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $p) (i32.const 1)))) (i32.const 32))
                  (then
                    (if (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $p) (i32.const 1)) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
                    (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
                    (if (i32.and (local.get $k) (i32.const 32))
                      (then (local.set $q (i32.add (local.get $p) (i32.const 1)))))))))
            (if (i32.ge_s (local.get $q) (i32.const 0))
              (then
                (local.set $e (i32.add (local.get $q) (i32.const 1)))
        (block $symbolsEnd
          (loop $symbols
            (if (i32.ge_u (local.get $e) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $e) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
            (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
            (br_if $symbolsEnd (i32.eqz (i32.and (local.get $k) (i32.const 32))))
            (local.set $e (i32.add (local.get $e) (i32.const 1)))
            (br $symbols)))
                (loop $tail
                  (if (i32.ge_u (local.get $e) (local.get $len))
          (then (local.set $x (select (i32.const 0) (i32.const -2) (local.get $atEnd))))
          (else (local.set $x (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $e) (i32.const 1)))))))
                  (if (i32.eq (local.get $x) (i32.const -2)) (then (br $giveUp)))
                  (if (i32.or
                        (i32.or (i32.eq (local.get $x) (i32.const 10)) (i32.eq (local.get $x) (i32.const 13)))
                        (i32.eq (local.get $x) (i32.const 47)))
                    (then
                      (local.set $e (i32.add (local.get $e) (i32.const 1)))
                      (br $tail))))
                (br $found)))
            ;; 5 to 7: white space
            (local.set $e (local.get $p))
            (local.set $lastBreak (i32.const -1))
            (block $spaceEnd
              (loop $space
                (if (i32.ge_u (local.get $e) (local.get $len))
          (then (local.set $k (select (i32.const 0) (i32.const -1) (local.get $atEnd))))
          (else
            (local.set $c (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $e) (i32.const 1)))))
            (if (i32.lt_u (local.get $c) (i32.const 128))
              (then (local.set $k (i32.load8_u (local.get $c))))
              (else
                (local.set $k (i32.load8_s (i32.add (i32.const 65536) (local.get $c))))
                (if (i32.eq (local.get $k) (i32.const 127)) (then (local.set $k (i32.const -1))))))))
                (if (i32.lt_s (local.get $k) (i32.const 0)) (then (br $giveUp)))
                (br_if $spaceEnd (i32.eqz (i32.and (local.get $k) (i32.const 8))))
                (if (i32.and (local.get $k) (i32.const 16)) (then (local.set $lastBreak (local.get $e))))
                (local.set $e (i32.add (local.get $e) (i32.const 1)))
                (br $space)))
            (if (i32.ge_s (local.get $lastBreak) (i32.const 0))
              (then
                (local.set $e (i32.add (local.get $lastBreak) (i32.const 1)))
                (br $found)))
            ;; at the text's end (a class of 0 past the window is only ever the text's end)
            (br_if $found (i32.ge_u (local.get $e) (local.get $len)))
            (if (i32.ge_s (i32.sub (local.get $e) (local.get $p)) (i32.const 2))
              (then (local.set $e (i32.sub (local.get $e) (i32.const 1))))))
          ;; found: the chunk is [$p, $e)
          (if (local.get $lookup)
            (then
              ;; FNV-1a of its code units, then the probe from there
              (local.set $h (i32.const 0x811c9dc5))
              (local.set $i (local.get $p))
              (block $hashed
                (loop $hash
                  (br_if $hashed (i32.ge_u (local.get $i) (local.get $e)))
                  (local.set $h (i32.mul
                    (i32.xor (local.get $h) (i32.load16_u (i32.add (i32.const 131072) (i32.shl (local.get $i) (i32.const 1)))))
                    (i32.const 0x01000193)))
                  (local.set $i (i32.add (local.get $i) (i32.const 1)))
                  (br $hash)))
              (local.set $length (i32.sub (local.get $e) (local.get $p)))
              (block $token
                ;; a token found recently: its slot holds the same hash and length, and its text matches
                (local.set $slot (i32.add (i32.const 458752) (i32.shl (i32.and (local.get $h) (i32.const 16383)) (i32.const 4))))
                (if (i32.and
                      (i32.eq (i32.load (local.get $slot)) (local.get $h))
                      (i32.eq (i32.load offset=8 (local.get $slot)) (local.get $length)))
                  (then
                    (local.set $at (i32.load offset=4 (local.get $slot)))
                    (local.set $i (i32.const 0))
                    (block $missed
                      (loop $recent
                        (br_if $token (i32.ge_u (local.get $i) (local.get $length)))
                        (br_if $missed (i32.ne
                          (i32.load16_u (i32.add (global.get $blobAt) (i32.shl (i32.add (local.get $at) (local.get $i)) (i32.const 1))))
                          (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $p) (local.get $i)) (i32.const 1))))))
                        (local.set $i (i32.add (local.get $i) (i32.const 1)))
                        (br $recent)))))
                (local.set $k (i32.and (local.get $h) (global.get $mask)))
                (loop $probe
                  (local.set $rank (i32.sub
                    (i32.load (i32.add (global.get $tableAt) (i32.shl (local.get $k) (i32.const 2))))
                    (i32.const 1)))
                  (if (i32.lt_s (local.get $rank) (i32.const 0))
                    (then
                      ;; not a token: listed for the JavaScript
                      (i32.store (i32.add (i32.const 196608) (i32.shl (global.get $others) (i32.const 3))) (local.get $p))
                      (i32.store (i32.add (i32.const 196612) (i32.shl (global.get $others) (i32.const 3))) (local.get $e))
                      (global.set $others (i32.add (global.get $others) (i32.const 1)))
                      (local.set $p (local.get $e))
                      (br $next)))
                  (local.set $at (i32.load (i32.add (global.get $offsetsAt) (i32.shl (local.get $rank) (i32.const 2)))))
                  (if (i32.eq
                        (i32.sub (i32.load offset=4 (i32.add (global.get $offsetsAt) (i32.shl (local.get $rank) (i32.const 2)))) (local.get $at))
                        (local.get $length))
                    (then
                      (local.set $i (i32.const 0))
                      (block $differs
                        (loop $same
                          (if (i32.ge_u (local.get $i) (local.get $length))
                            (then
                              ;; kept among the recent ones
                              (i32.store (local.get $slot) (local.get $h))
                              (i32.store offset=4 (local.get $slot) (local.get $at))
                              (i32.store offset=8 (local.get $slot) (local.get $length))
                              (br $token)))
                          (br_if $differs (i32.ne
                            (i32.load16_u (i32.add (global.get $blobAt) (i32.shl (i32.add (local.get $at) (local.get $i)) (i32.const 1))))
                            (i32.load16_u (i32.add (i32.const 131072) (i32.shl (i32.add (local.get $p) (local.get $i)) (i32.const 1))))))
                          (local.set $i (i32.add (local.get $i) (i32.const 1)))
                          (br $same)))))
                  (local.set $k (i32.and (i32.add (local.get $k) (i32.const 1)) (global.get $mask)))
                  (br $probe)))))
          (local.set $n (i32.add (local.get $n) (i32.const 1)))
          (local.set $p (local.get $e))
          (br $next))
        ;; given up: the JavaScript finds the chunk at $p
        (br $done)))
    (global.set $stop (local.get $p))
    (local.get $n))

  (func (export "stop") (result i32) (global.get $stop))

  (func (export "others") (result i32) (global.get $others)))
