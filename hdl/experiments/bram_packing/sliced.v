// Experiment: 32/W counters per 32-bit RAM word, the word stored as a 27-bit RAM (three
// 9-bit slices: 4K x 9 blocks, parity bits included) beside a 5-bit RAM (16K x 2 blocks and
// one 16K x 1 RAMB18). Word-wide forwarding, the CM/ACU step on the addressed lane.
module sliced #(parameter W=8, A=16) (
  input clk, input valid, input [A-1:0] addr, input om_inf, input [31:0] om,
  output reg o_inf, output reg [31:0] o_om);
  localparam L = 32 / W;
  localparam LB = (L == 1) ? 0 : $clog2(L);
  localparam AW = A - LB;
  localparam [31:0] M = (64'd1<<W)-1;
  reg [26:0] hi [0:(1<<AW)-1];
  reg [4:0] lo [0:(1<<AW)-1];
  wire [AW-1:0] wa = addr[A-1:LB];
  wire [LB:0] ln = (L == 1) ? 0 : addr[LB-1:0];
  reg s1v, s2v, wrv, d1v; reg [AW-1:0] s1l, s2l, wrl, d1l; reg [LB:0] s1n, s2n; reg [31:0] rd_q; reg [1:0] sel; reg [31:0] wr_d, d1_d, d2_d;
  always @(posedge clk) begin
    rd_q <= {hi[wa], lo[wa]}; s1v <= valid; s1l <= wa; s1n <= ln;
    sel <= (s2v && s1l==s2l) ? 2'd1 : (wrv && s1l==wrl) ? 2'd2 : (d1v && s1l==d1l) ? 2'd3 : 2'd0;
    s2v <= s1v; s2l <= s1l; s2n <= s1n;
  end
  reg [31:0] vw; always @* case (sel) 0: vw = rd_q; 1: vw = wr_d; 2: vw = d1_d; default: vw = d2_d; endcase
  wire [W-1:0] v = vw >> (s2n * W);
  wire [31:0] v32 = v; wire [31:0] c = v32 + 1;
  wire upd = (v32 != M) && (om_inf || v32 < om);
  reg [31:0] nw; integer k;
  always @* begin nw = vw; for (k = 0; k < L; k = k + 1) if (upd && s2n == k) nw[k*W +: W] = c[W-1:0]; end
  always @(posedge clk) begin
    wrv <= s2v; wrl <= s2l; wr_d <= nw; d1v <= wrv; d1l <= wrl; d1_d <= wr_d; d2_d <= d1_d;
    if (upd && c != M) begin o_inf <= 0; o_om <= c; end else begin o_inf <= om_inf; o_om <= om; end
    if (wrv) begin hi[wrl] <= wr_d[31:5]; lo[wrl] <= wr_d[4:0]; end
  end
endmodule
