// Types for `vendor/uplot.js`, which the server maps to uplot's own ESM build (see ../../assets.ts).
import uPlot from 'uplot';
export default uPlot;
