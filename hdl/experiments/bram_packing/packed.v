// Experiment: a parity-packed TowerSketch counter array. Nine W-bit counters per 9W-bit RAM
// word use the block RAM's parity bits (RAMB36 in 512 x 72), which is the only way under
// 48 RAMB36 for 3 x 512 Kbit. Counter index -> location by bit selection alone (no divide):
// idx = {s[2:0], w}; if w's top three bits are not all ones the counter is slot s of main
// word w; else, with u = w's low A-6 bits, it is slot 8 of main word {s, u} when s != 7 and
// the tail RAM's entry u when s == 7. Main: 7 * 2^(A-6) words (14 RAMB36 at A = 16, W = 8
// and at A = 15, W = 16), tail: 2^(A-6) counters (one RAMB18). Same CM/ACU step and 3-deep
// forwarding as the pipeline, on whole words (a word holds nine counters in flight).
module packed #(parameter W=8, A=16) (
  input clk, input valid, input [A-1:0] addr, input om_inf, input [31:0] om,
  output reg o_inf, output reg [31:0] o_om);
  localparam WB = 9*W;            // word bits
  localparam AW = A-3;            // word address bits (main words = 7 * 2^(A-6))
  localparam TA = A-6;            // tail address bits
  localparam [31:0] M = (64'd1<<W)-1;
  reg [WB-1:0] main [0:7*(1<<TA)-1];
  reg [W-1:0] tail [0:(1<<TA)-1];
  // s0: map
  wire [2:0] s = addr[A-1:A-3];
  wire [AW-1:0] w = addr[AW-1:0];
  wire hi = &w[AW-1:AW-3];
  wire [TA-1:0] u = w[TA-1:0];
  wire is_tail = hi & (&s);
  wire [AW-1:0] mw = hi ? {s, u} : w;
  wire [3:0] slot = hi ? 4'd8 : {1'b0, s};
  reg s1v, s2v, wrv, d1v; reg [AW:0] s1l, s2l, wrl, d1l; reg [3:0] s1s, s2s; reg [WB-1:0] rdm_q, rd_q; reg [W-1:0] rdt_q;
  reg s1t; reg [1:0] sel; reg [WB-1:0] wr_d, d1_d, d2_d;
  always @(posedge clk) begin
    rdm_q <= main[mw]; rdt_q <= tail[u];
    s1v <= valid; s1l <= {is_tail, mw}; s1s <= slot;
    sel <= (s2v && s1l==s2l) ? 2'd1 : (wrv && s1l==wrl) ? 2'd2 : (d1v && s1l==d1l) ? 2'd3 : 2'd0;
    s2v <= s1v; s2l <= s1l; s2s <= s1s;
  end
  wire [WB-1:0] ram_w = s2l[AW] ? {{(WB-W){1'b0}}, rdt_q} : rdm_q;
  reg [WB-1:0] vw; always @* case (sel) 0: vw = ram_w; 1: vw = wr_d; 2: vw = d1_d; default: vw = d2_d; endcase
  wire [3:0] es = s2l[AW] ? 4'd0 : s2s;
  reg [W-1:0] v; integer j;
  always @* begin v = vw[W-1:0]; for (j = 1; j < 9; j = j + 1) if (es == j) v = vw[j*W +: W]; end
  wire [31:0] v32 = v; wire [31:0] c = v32 + 1;
  wire upd = (v32 != M) && (om_inf || v32 < om);
  reg [WB-1:0] nw; integer k;
  always @* begin nw = vw; for (k = 0; k < 9; k = k + 1) if (upd && es == k) nw[k*W +: W] = c[W-1:0]; end
  always @(posedge clk) begin
    wrv <= s2v; wrl <= s2l; wr_d <= nw; d1v <= wrv; d1l <= wrl; d1_d <= wr_d; d2_d <= d1_d;
    if (upd && c != M) begin o_inf <= 0; o_om <= c; end else begin o_inf <= om_inf; o_om <= om; end
    if (wrv && !wrl[AW]) main[wrl[AW-1:0]] <= wr_d;
    if (wrv && wrl[AW]) tail[wrl[TA-1:0]] <= wr_d[W-1:0];
  end
endmodule
