;; The history's scans of identifiers and lines (see ../known.ts), compiled:
;; each finds what its JavaScript counterpart finds (`extractIdentifiers`,
;; the line keys of `addLines` in history.ts) and writes a 64-bit hash of
;; each (two 32-bit lanes) instead of making a string of it.
;;
;; The caller writes a chunk of text (UTF-16) at 32768 and calls `ids` or
;; `lines` with its length; the hashes come back at 128, two i32 each, and
;; the call returns how many. A chunk ends where no identifier (for `ids`)
;; or line (for `lines`) goes on: the caller cuts the text so.
;; Memory (one 64 KiB page): 0..127 the class of each ASCII character
;; (1 identifier character, 2 mark, 4 trailing punctuation, 8 white space).
;; Rebuild: `node scripts/build-wasm.js` (writes known-wasm.ts).
(module
  (memory (export "memory") 1)

  ;; Writes the hash of the characters at [$from, $to) (byte addresses) at $out:
  ;; two characters a step (one 32-bit load, the first in the low half), the
  ;; last one alone when their number is odd, then their number. Each lane
  ;; multiplies, then folds its high bits down (a multiply carries bits up only).
  (func $hashTo (param $from i32) (param $to i32) (param $out i32)
    (local $w i32) (local $h1 i32) (local $h2 i32) (local $pairs i32) (local $n i32)
    (local.set $n (i32.shr_u (i32.sub (local.get $to) (local.get $from)) (i32.const 1)))
    (local.set $h1 (i32.const 0x811c9dc5))
    (local.set $h2 (i32.const 0x2545f491))
    ;; where the pairs end: $to, or one character before it
    (local.set $pairs (i32.sub (local.get $to) (i32.and (i32.sub (local.get $to) (local.get $from)) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $from) (local.get $pairs)))
        (local.set $w (i32.load (local.get $from)))
        (local.set $h1 (i32.mul (i32.xor (local.get $h1) (local.get $w)) (i32.const 0x01000193)))
        (local.set $h1 (i32.xor (local.get $h1) (i32.shr_u (local.get $h1) (i32.const 15))))
        (local.set $h2 (i32.mul (i32.xor (local.get $h2) (local.get $w)) (i32.const 0x5bd1e995)))
        (local.set $h2 (i32.xor (local.get $h2) (i32.shr_u (local.get $h2) (i32.const 13))))
        (local.set $from (i32.add (local.get $from) (i32.const 4)))
        (br $next)))
    (if (i32.lt_u (local.get $from) (local.get $to))
      (then
        (local.set $w (i32.load16_u (local.get $from)))
        (local.set $h1 (i32.mul (i32.xor (local.get $h1) (local.get $w)) (i32.const 0x01000193)))
        (local.set $h1 (i32.xor (local.get $h1) (i32.shr_u (local.get $h1) (i32.const 15))))
        (local.set $h2 (i32.mul (i32.xor (local.get $h2) (local.get $w)) (i32.const 0x5bd1e995)))
        (local.set $h2 (i32.xor (local.get $h2) (i32.shr_u (local.get $h2) (i32.const 13))))))
    ;; the number of characters: a text and the same text with a NUL more differ
    (local.set $h1 (i32.mul (i32.xor (local.get $h1) (local.get $n)) (i32.const 0x01000193)))
    (i32.store (local.get $out) (local.get $h1))
    (i32.store offset=4 (local.get $out) (local.get $h2)))

  ;; Identifiers of the $n characters at 32768: maximal runs of identifier
  ;; characters with a mark, trailing punctuation left out, of at least 5.
  (func (export "ids") (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $start i32) (local $keep i32) (local $c i32) (local $cls i32)
    (local $marks i32) (local $keepMarks i32) (local $out i32)
    (local.set $out (i32.const 128))
    (local.set $p (i32.const 32768))
    (local.set $end (i32.add (i32.const 32768) (i32.shl (local.get $n) (i32.const 1))))
    (block $done
      (loop $runs
        ;; to the next identifier character
        (block $found
          (loop $skip
            (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $c (i32.load16_u (local.get $p)))
            (br_if $found
              (i32.and
                (i32.lt_u (local.get $c) (i32.const 128))
                (i32.and (i32.load8_u (i32.and (local.get $c) (i32.const 127))) (i32.const 1))))
            (local.set $p (i32.add (local.get $p) (i32.const 2)))
            (br $skip)))
        (local.set $start (local.get $p))
        (local.set $marks (i32.const 0))
        (local.set $keepMarks (i32.const 0))
        (local.set $keep (local.get $p))
        ;; through the run: its marks, and its end without trailing punctuation
        (block $ended
          (loop $run
            (br_if $ended (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $c (i32.load16_u (local.get $p)))
            (local.set $cls
              (if (result i32) (i32.lt_u (local.get $c) (i32.const 128))
                (then (i32.load8_u (local.get $c)))
                (else (i32.const 0))))
            (br_if $ended (i32.eqz (i32.and (local.get $cls) (i32.const 1))))
            (local.set $p (i32.add (local.get $p) (i32.const 2)))
            (local.set $marks (i32.or (local.get $marks) (local.get $cls)))
            (if (i32.eqz (i32.and (local.get $cls) (i32.const 4)))
              (then
                (local.set $keep (local.get $p))
                (local.set $keepMarks (local.get $marks))))
            (br $run)))
        ;; an identifier: at least 5 characters with a mark once trailing punctuation is left out
        ;; (what `extractIdentifiers` asks of the whole run first follows from it)
        (if (i32.and
              (i32.ge_u (i32.sub (local.get $keep) (local.get $start)) (i32.const 10))
              (i32.ne (i32.and (local.get $keepMarks) (i32.const 2)) (i32.const 0)))
          (then
            (call $hashTo (local.get $start) (local.get $keep) (local.get $out))
            (local.set $out (i32.add (local.get $out) (i32.const 8)))))
        (br $runs)))
    (i32.shr_u (i32.sub (local.get $out) (i32.const 128)) (i32.const 3)))

  ;; True when $c is white space as JavaScript's `trim` and `\s` see it.
  (func $isSpace (param $c i32) (result i32)
    (if (i32.lt_u (local.get $c) (i32.const 128))
      (then (return (i32.ne (i32.and (i32.load8_u (local.get $c)) (i32.const 8)) (i32.const 0)))))
    (i32.or
      (i32.or
        (i32.or (i32.eq (local.get $c) (i32.const 0xa0)) (i32.eq (local.get $c) (i32.const 0x1680)))
        (i32.or
          (i32.le_u (i32.sub (local.get $c) (i32.const 0x2000)) (i32.const 0x0a))
          (i32.or (i32.eq (local.get $c) (i32.const 0x2028)) (i32.eq (local.get $c) (i32.const 0x2029)))))
      (i32.or
        (i32.or (i32.eq (local.get $c) (i32.const 0x202f)) (i32.eq (local.get $c) (i32.const 0x205f)))
        (i32.or (i32.eq (local.get $c) (i32.const 0x3000)) (i32.eq (local.get $c) (i32.const 0xfeff))))))

  ;; Line keys of the $n characters at 32768 that are at least $min long: each
  ;; line (to a newline or the end) without a listing's number (` *\d+(→|\t)`)
  ;; and without white space at either end.
  (func (export "lines") (param $n i32) (param $min i32) (result i32)
    (local $p i32) (local $end i32) (local $lineEnd i32) (local $q i32) (local $c i32) (local $out i32)
    (local.set $out (i32.const 128))
    (local.set $p (i32.const 32768))
    (local.set $end (i32.add (i32.const 32768) (i32.shl (local.get $n) (i32.const 1))))
    (block $done
      (loop $lines
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        ;; the line's end
        (local.set $lineEnd (local.get $p))
        (block $eol
          (loop $find
            (br_if $eol (i32.ge_u (local.get $lineEnd) (local.get $end)))
            (br_if $eol (i32.eq (i32.load16_u (local.get $lineEnd)) (i32.const 10)))
            (local.set $lineEnd (i32.add (local.get $lineEnd) (i32.const 2)))
            (br $find)))
        (if (i32.ge_u (i32.sub (local.get $lineEnd) (local.get $p)) (i32.shl (local.get $min) (i32.const 1)))
          (then
            ;; a listing's number: spaces, digits, then an arrow or a tab
            (local.set $q (local.get $p))
            (block $spaces
              (loop $sp
                (br_if $spaces (i32.ge_u (local.get $q) (local.get $lineEnd)))
                (br_if $spaces (i32.ne (i32.load16_u (local.get $q)) (i32.const 32)))
                (local.set $q (i32.add (local.get $q) (i32.const 2)))
                (br $sp)))
            (local.set $c (local.get $q))
            (block $digits
              (loop $dg
                (br_if $digits (i32.ge_u (local.get $q) (local.get $lineEnd)))
                (br_if $digits (i32.gt_u (i32.sub (i32.load16_u (local.get $q)) (i32.const 48)) (i32.const 9)))
                (local.set $q (i32.add (local.get $q) (i32.const 2)))
                (br $dg)))
            (if (i32.and
                  (i32.ne (local.get $q) (local.get $c))
                  (i32.and
                    (i32.lt_u (local.get $q) (local.get $lineEnd))
                    (i32.or
                      (i32.eq (i32.load16_u (local.get $q)) (i32.const 0x2192))
                      (i32.eq (i32.load16_u (local.get $q)) (i32.const 9)))))
              (then (local.set $q (i32.add (local.get $q) (i32.const 2))))
              (else (local.set $q (local.get $p))))
            ;; white space at both ends
            (block $lead
              (loop $ld
                (br_if $lead (i32.ge_u (local.get $q) (local.get $lineEnd)))
                (br_if $lead (i32.eqz (call $isSpace (i32.load16_u (local.get $q)))))
                (local.set $q (i32.add (local.get $q) (i32.const 2)))
                (br $ld)))
            (local.set $c (local.get $lineEnd))
            (block $trail
              (loop $tr
                (br_if $trail (i32.le_u (local.get $c) (local.get $q)))
                (br_if $trail (i32.eqz (call $isSpace (i32.load16_u (i32.sub (local.get $c) (i32.const 2))))))
                (local.set $c (i32.sub (local.get $c) (i32.const 2)))
                (br $tr)))
            (if (i32.ge_u (i32.sub (local.get $c) (local.get $q)) (i32.shl (local.get $min) (i32.const 1)))
              (then
                (call $hashTo (local.get $q) (local.get $c) (local.get $out))
                (local.set $out (i32.add (local.get $out) (i32.const 8)))))))
        (local.set $p (i32.add (local.get $lineEnd) (i32.const 2)))
        (br $lines)))
    (i32.shr_u (i32.sub (local.get $out) (i32.const 128)) (i32.const 3))))
